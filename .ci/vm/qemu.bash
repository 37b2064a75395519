# shellcheck shell=bash
# The boot of .ci/vm/run (sourced by it): qemu on the cached kernel and the
# initramfs, the console streamed to stdout (carriage returns dropped) and kept.
#
# Uses run's globals: TIMEOUT, ACCEL, MEM, SMP, KDIR, INITRD, WORK, LOGFILE.
# boot_vm sets LOG (the console), qrc (qemu's status, 124: timed out) and t2
# (when the VM ended); it copies the console to LOGFILE when one was given.

boot_vm() {
  LOG="$WORK/console.log"
  set +e
  timeout -k 10 "$TIMEOUT" qemu-system-x86_64 \
    -nodefaults -no-user-config \
    "${ACCEL[@]}" -cpu max -m "$MEM" -smp "$SMP" \
    -display none -serial stdio -monitor none -no-reboot \
    -kernel "$KDIR/vmlinuz" -initrd "$INITRD" \
    -append "console=ttyS0 panic=-1 quiet ${IPVSNL_VM_APPEND:-}" \
    </dev/null 2>&1 | sed -u 's/\r$//' | tee "$LOG"
  qrc=${PIPESTATUS[0]}
  set -e
  t2=$(date +%s.%N)
  [ -z "$LOGFILE" ] || cp "$LOG" "$LOGFILE"
}
