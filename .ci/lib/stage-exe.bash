# shellcheck shell=bash
# An executable copied into a VM payload (sourced by the .ci/ scripts and
# scripts/measure/). The initramfs is packed anew for every boot and a debug
# build is mostly debug info, so it is dropped on the way.
#
#   stage_exe SRC DEST   copies executable SRC to DEST: a directory (the copy
#                        keeps SRC's name) or a file path; debug info
#                        stripped unless IPVSNL_VM_KEEP_DEBUG=1 (a backtrace
#                        with line numbers) or objcopy is missing
stage_exe() {
  local dest=$2
  [ -d "$dest" ] && dest="$dest/$(basename "$1")"
  if [ -z "${IPVSNL_VM_KEEP_DEBUG:-}" ] && command -v objcopy >/dev/null 2>&1; then
    objcopy --strip-debug "$1" "$dest"
  else
    cp "$1" "$dest"
  fi
}
