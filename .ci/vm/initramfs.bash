# shellcheck shell=bash
# The initramfs of .ci/vm/run (sourced by it): busybox and the host tools with
# their libraries, /etc, the pruned modules, the payload, the command and the
# init (guest-init).
#
# Uses run's globals: prog, die, HERE, CACHE, WORK, KDIR, KVER, PAYLOAD, PRELOAD.
# build_initramfs COMMAND [ARGS...] sets ROOT, INITRD and t0/t1 (start and end
# of the build, for the timing line).

is_elf() { [ -f "$1" ] && [ "$(head -c4 "$1" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; }

# Copies the shared libraries (and the loader) that ldd reports for $1.
copy_libs() {
  local lib
  # "libx.so => /path (0x..)" and "/lib64/ld-linux-x86-64.so.2 (0x..)"
  for lib in $(ldd "$1" 2>/dev/null | sed -n -e 's/.*=> \(\/[^ ]*\) (.*/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
    if [ ! -e "$ROOT$lib" ]; then
      mkdir -p "$ROOT$(dirname "$lib")"
      cp -L "$lib" "$ROOT$lib"
    fi
  done
}

# Copies host binary $1 to $2 (path in the VM), with its libraries.
copy_bin() {
  mkdir -p "$ROOT$(dirname "$2")"
  cp -L "$1" "$ROOT$2"
  copy_libs "$1"
}

# copy_peer PATH: $CACHE/peers/PATH to /PATH in the image with its libraries,
# those of the peers' tree first (they keep their path under it), the host's
# for the rest. Nothing when .ci/setup did not fetch it; a warning, and the
# binary left out, when a library is found in neither.
copy_peer() {
  local tree="$CACHE/peers" lib missing
  [ -x "$tree/$1" ] || return 0
  missing=$(LD_LIBRARY_PATH="$tree/usr/lib/x86_64-linux-gnu" ldd "$tree/$1" 2>/dev/null |
    sed -n 's/^[[:space:]]*\([^ ]*\) => not found.*/\1/p' | tr '\n' ' ')
  if [ -n "$missing" ]; then
    echo "$prog: warning: /$1 left out of the VM: libraries not found: $missing" >&2
    return 0
  fi
  mkdir -p "$ROOT/$(dirname "$1")"
  cp "$tree/$1" "$ROOT/$1"
  for lib in $(LD_LIBRARY_PATH="$tree/usr/lib/x86_64-linux-gnu" ldd "$tree/$1" |
               sed -n -e 's/.*=> \(\/[^ ]*\) (.*/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
    local dest=${lib#"$tree"}
    if [ ! -e "$ROOT$dest" ]; then
      mkdir -p "$ROOT$(dirname "$dest")"
      cp -L "$lib" "$ROOT$dest"
    fi
  done
}

build_initramfs() {
  t0=$(date +%s.%N)
  ROOT="$WORK/root"
  mkdir -p "$ROOT"/usr/{bin,sbin,lib,lib64} "$ROOT"/{etc,proc,sys,dev,tmp,run,root,payload,var,mnt}
  ln -s usr/bin "$ROOT/bin"
  ln -s usr/sbin "$ROOT/sbin"
  ln -s usr/lib "$ROOT/lib"
  ln -s usr/lib64 "$ROOT/lib64"
  ln -s ../run "$ROOT/var/run"
  chmod 1777 "$ROOT/tmp"

  BUSYBOX=/bin/busybox
  [ -x "$BUSYBOX" ] || die "busybox not found (apt-get install busybox-static)"
  copy_bin "$BUSYBOX" /usr/bin/busybox
  # /bin/sh: dash when the host has it. Debian's static busybox ash runs its own
  # applets in preference to PATH (so `ip` in a script would be busybox's even with
  # iproute2 installed); dash looks up PATH like everything else does.
  if [ -x /usr/bin/dash ] || [ -x /bin/dash ]; then
    copy_bin "$(command -v dash)" /usr/bin/dash
    ln -s dash "$ROOT/usr/bin/sh"
  fi
  copy_bin "$(command -v ipvsadm)" /usr/sbin/ipvsadm
  # Optional Debian tools: iproute2's ip (busybox's ignores a veth peer's name) and
  # util-linux's setpriv (busybox's cannot change uid).
  if p=$(command -v ip); then copy_bin "$p" /usr/sbin/ip; fi
  if p=$(command -v setpriv); then copy_bin "$p" /usr/bin/setpriv; fi
  # Debian's promtool and node_exporter, unpacked by .ci/setup into the cache
  # (never installed on the host: the packages start daemons), for the
  # exporter's kernel test.
  for t in promtool prometheus-node-exporter; do
    if [ -x "$CACHE/tools/usr/bin/$t" ]; then copy_bin "$CACHE/tools/usr/bin/$t" "/usr/bin/$t"; fi
  done
  # Debian's keepalived, etcd and etcdctl (the director daemon's reference
  # peers), unpacked by .ci/setup into the cache's peers/ with the libraries
  # keepalived needs that the host may lack (.ci/lib/peers.bash).
  # Opt-in (IPVSNL_VM_PEERS=1): they double the image (23 -> 49 MiB).
  if [ "${IPVSNL_VM_PEERS:-0}" = 1 ]; then
    copy_peer usr/sbin/keepalived
    copy_peer usr/bin/etcd
    copy_peer usr/bin/etcdctl
    # keepalived's sample configurations: the side by side of the agent's
    # import with keepalived (tests/kernel_tools/keepalived_side.rs).
    if [ -d "$CACHE/peers/usr/share/doc/keepalived/samples" ]; then
      mkdir -p "$ROOT/usr/share/doc/keepalived"
      cp -r "$CACHE/peers/usr/share/doc/keepalived/samples" "$ROOT/usr/share/doc/keepalived/"
    fi
  fi
  # busybox applets, where no real binary was installed above.
  for a in $("$BUSYBOX" --list-full); do
    case $a in
      bin/*) t=usr/bin/${a#bin/} ;;
      sbin/*) t=usr/sbin/${a#sbin/} ;;
      usr/*) t=$a ;;
      *) continue ;;
    esac
    [ -e "$ROOT/$t" ] || [ -L "$ROOT/$t" ] || ln -s /usr/bin/busybox "$ROOT/$t"
  done

  # /etc: name resolution and users.
  for f in protocols services; do
    if [ -f "/etc/$f" ]; then cp "/etc/$f" "$ROOT/etc/$f"
    else echo "$prog: warning: /etc/$f missing on the host (package netbase)" >&2
    fi
  done
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOT/etc/hosts"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$ROOT/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOT/etc/group"
  printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\nprotocols: files\nservices: files\n' >"$ROOT/etc/nsswitch.conf"
  echo ipvsnl-vm >"$ROOT/etc/hostname"

  # Modules.
  mkdir -p "$ROOT/usr/lib/modules"
  cp -a "$KDIR/modules/lib/modules/$KVER" "$ROOT/usr/lib/modules/"

  # Payload.
  if [ -n "$PAYLOAD" ]; then
    cp -a "$PAYLOAD/." "$ROOT/payload/"
    while IFS= read -r -d '' f; do
      is_elf "$f" && copy_libs "$f"
    done < <(find "$PAYLOAD" -type f -perm /111 -print0)
  fi

  # The command, quoted for the VM's shell.
  # (POSIX single quotes: the VM's sh may be dash, which has no $'...'.)
  {
    printf 'exec'
    for a in "$@"; do printf " '%s'" "${a//\'/\'\\\'\'}"; done
    printf '\n'
  } >"$ROOT/.ipvsnl-cmd"

  # The init: PRELOAD, then guest-init (its shebang line is this one).
  {
    echo '#!/bin/sh'
    echo "PRELOAD=$PRELOAD"
    sed 1d "$HERE/guest-init"
  } >"$ROOT/init"
  chmod 755 "$ROOT/init"

  INITRD="$WORK/initrd.gz"
  (cd "$ROOT" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
     cpio --quiet -o -H newc -0 -R 0:0) | gzip -1 >"$INITRD"
  t1=$(date +%s.%N)
  printf '%s: kernel %s (%s %s), initramfs %s MiB built in %.1fs%s%s\n' "$prog" "$KERNEL" "$PKG" "$PKGVER" \
    "$(( $(stat -c %s "$INITRD") / 1048576 ))" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" \
    "$([ $PRELOAD = 1 ] || echo ', no preload')" "$CLOCK" >&2
}
