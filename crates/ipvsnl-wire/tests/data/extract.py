#!/usr/bin/env python3
"""Extracts the kernel captures printed by tests/kernel_capture.rs.

    IPVSNL_CARGO_ARGS="--test kernel_capture" .ci/kernel-tests -- --nocapture > LOG
    crates/ipvsnl-wire/tests/data/extract.py LOG

writes crates/ipvsnl-wire/tests/data/<kernel>/<exchange>.hex: one datagram per
block of hex lines, blocks separated by an empty line.
"""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
captures = {}
current = None
for line in open(sys.argv[1], errors="replace"):
    line = line.rstrip("\r\n")
    m = re.fullmatch(r"@@CAPTURE (\S+) (\S+)@@", line)
    if m:
        current = (m.group(1), m.group(2))
        captures.setdefault(current, []).append([])
        continue
    if line == "@@END@@":
        current = None
        continue
    if current is not None:
        if not re.fullmatch(r"[0-9a-f]+", line):
            sys.exit(f"non-hex line inside {current}: {line!r}")
        captures[current][-1].append(line)
for (kernel, name), datagrams in sorted(captures.items()):
    os.makedirs(os.path.join(here, kernel), exist_ok=True)
    with open(os.path.join(here, kernel, name + ".hex"), "w") as f:
        f.write("\n\n".join("\n".join(d) for d in datagrams) + "\n")
    print(kernel, name, len(datagrams), "datagrams")
