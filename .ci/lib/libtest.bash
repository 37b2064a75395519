# shellcheck shell=bash
# libtest's closing lines, summed (sourced by the .ci/ scripts).
#
#   libtest_totals FILE...   prints "PASSED FAILED RESULTS": the passed and
#                            failed counts summed over every
#                            "test result: ok. N passed; M failed" line of
#                            the files, and how many such lines there were
#                            (one per test binary run). Missing files count
#                            as empty; never fails.
libtest_totals() {
  { cat "$@" 2>/dev/null || true; } | tr -d '\r' |
    { grep -a -o 'test result: [A-Za-z]*\. [0-9]* passed; [0-9]* failed' || true; } |
    awk '{p += $4; f += $6} END {print p + 0, f + 0, NR}'
}
