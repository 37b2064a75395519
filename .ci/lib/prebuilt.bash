# shellcheck shell=bash
# Payloads built once, booted many times (sourced by the VM scripts).
# .ci/test builds every payload before its lanes start; the lanes' scripts
# then copy what was built instead of calling cargo, which would wait for
# the build directory's lock while the host lane compiles.
#
# With IPVSNL_PREBUILT=DIR in the environment:
#   prebuilt_save NAME PAYLOAD   (after a --build-only build) keeps a copy
#                                of PAYLOAD in DIR/NAME
#   prebuilt_load NAME PAYLOAD   copies DIR/NAME into PAYLOAD and succeeds
#                                when DIR/NAME exists; fails (the caller
#                                builds) otherwise
# Without it, both do nothing and prebuilt_load fails.

prebuilt_save() {
  [ -n "${IPVSNL_PREBUILT:-}" ] || return 0
  rm -rf "${IPVSNL_PREBUILT:?}/$1"
  mkdir -p "$IPVSNL_PREBUILT/$1"
  cp -a "$2/." "$IPVSNL_PREBUILT/$1/"
  echo "== payload kept in $IPVSNL_PREBUILT/$1" >&2
}

prebuilt_load() {
  [ -n "${IPVSNL_PREBUILT:-}" ] && [ -d "$IPVSNL_PREBUILT/$1" ] || return 1
  mkdir -p "$2"
  cp -a "$IPVSNL_PREBUILT/$1/." "$2/"
  echo "== payload from $IPVSNL_PREBUILT/$1 (built before; no cargo)" >&2
}
