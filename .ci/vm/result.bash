# shellcheck shell=bash
# The outcome of .ci/vm/run (sourced by it), read back from the console: the
# kernel that booted, when the command started, and its exit status (the
# markers guest-init prints).
#
# Uses run's globals: prog, LOG, qrc, TIMEOUT, t1, t2. report_result prints the
# summary line and exits with the command's status, or 125 when the VM gave none
# (crash, time-out).

report_result() {
  booted=$(grep -a -o 'IPVSNL-VM-KERNEL=[^[:space:]]*' "$LOG" | head -n1 | cut -d= -f2 || true)
  uptime=$(grep -a -o 'IPVSNL-VM-UPTIME=[0-9.]*' "$LOG" | head -n1 | cut -d= -f2 || true)
  marker=$(grep -a -o 'IPVSNL-VM-EXIT=[0-9]*' "$LOG" | tail -n1 | cut -d= -f2 || true)
  elapsed=$(awk -v a="$t1" -v b="$t2" 'BEGIN{print b-a}')
  if [ -z "$marker" ]; then
    if [ "$qrc" -eq 124 ]; then
      echo "$prog: TIMEOUT after ${TIMEOUT}s: the VM (kernel ${booted:-not booted}) did not finish" >&2
    else
      echo "$prog: the VM (kernel ${booted:-not booted}) ended without an exit status (qemu status $qrc)" >&2
    fi
    exit 125
  fi
  printf '%s: kernel %s booted (command started %ss after boot), VM ran %.1fs, command exit status %s\n' \
    "$prog" "$booted" "${uptime:-?}" "$elapsed" "$marker" >&2
  exit "$marker"
}
