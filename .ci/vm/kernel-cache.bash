# shellcheck shell=bash
# The kernel cache of .ci/vm/run (sourced by it): the Debian kernel package
# behind the metapackage, downloaded once, unpacked, its module tree pruned to
# what the tests load.
#
# Uses run's globals: prog, die, META, KERNEL, CACHE. prepare_kernel sets
# KDIR (cache dir of this package), KVER (uname -r), PKG and PKGVER.

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else return 1
  fi
}

# Prints "<package> <version>" of the real kernel image behind the metapackage.
resolve_pkg() {
  local pkg ver
  pkg=$(apt-cache depends "$META" 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[^ <>]*\).*/\1/p' | head -n1)
  [ -n "$pkg" ] || return 1
  ver=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | head -n1)
  [ -n "$ver" ] && [ "$ver" != "(none)" ] || return 1
  echo "$pkg $ver"
}

# Modules to keep besides net/netfilter/ipvs/ (their dependencies come along:
# tunnel4/6, ip_tunnel, gre, udp_tunnel, ...): veth and dummy; the real
# servers' ends of the IPVS tunnels (ipip, ip_gre, fou for GUE, ip6_tunnel,
# ip6_gre, fou6); sctp for SCTP traffic; bridge (with stp, llc) for the
# fleet tests' L2 segment (.ci/fleet-tests). The list is stored with the pruned
# tree, which is pruned again (from the kept package) when the list changes.
EXTRA_MODULES=$(printf '%s ' \
  kernel/drivers/net/veth.ko kernel/drivers/net/dummy.ko \
  kernel/net/ipv4/ipip.ko kernel/net/ipv4/ip_gre.ko kernel/net/ipv4/fou.ko \
  kernel/net/ipv6/ip6_tunnel.ko kernel/net/ipv6/ip6_gre.ko kernel/net/ipv6/fou6.ko \
  kernel/net/sctp/sctp.ko kernel/net/bridge/bridge.ko)

# prune_modules PKGROOT KVER DEST: DEST/lib/modules/KVER gets ipvs/ and
# EXTRA_MODULES with what modules.dep (of PKGROOT, made by depmod) says they
# need, decompressed, depmod'ed; DEST/extra-modules records the list.
prune_modules() {
  local src="$1/lib/modules/$2" dst="$3/lib/modules/$2"
  mkdir -p "$dst"
  local mods
  mods=$(awk -v extra=" $EXTRA_MODULES " '
      {
        m = $1; sub(/:$/, "", m)
        base = m; sub(/\.(xz|zst|gz)$/, "", base)
        if (base ~ /^kernel\/net\/netfilter\/ipvs\// || index(extra, " " base " ")) {
          print m
          for (i = 2; i <= NF; i++) print $i
        }
      }' "$src/modules.dep" | sort -u)
  echo "$mods" | grep -q 'ipvs/ip_vs\.ko' || die "ip_vs.ko not found in $1"
  local m
  for m in $EXTRA_MODULES; do
    echo "$mods" | grep -q "^$m" || die "$m not found in $1"
  done
  for m in $mods; do
    mkdir -p "$dst/$(dirname "$m")"
    case $m in
      *.ko.xz) xz -dc "$src/$m" >"$dst/${m%.xz}" ;;
      *.ko.zst) zstd -qdc "$src/$m" >"$dst/${m%.zst}" ;;
      *.ko.gz) gzip -dc "$src/$m" >"$dst/${m%.gz}" ;;
      *) cp "$src/$m" "$dst/$m" ;;
    esac
  done
  for m in modules.order modules.builtin modules.builtin.modinfo; do
    [ -f "$src/$m" ] && cp "$src/$m" "$dst/$m"
  done
  depmod -b "$3" "$2"
  grep -q '^kernel/net/netfilter/ipvs/ip_vs\.ko:' "$dst/modules.dep" ||
    die "pruned modules.dep has no ip_vs.ko"
  echo "$EXTRA_MODULES" >"$3/extra-modules"
}

# Sets KDIR (cache dir of this package), KVER (uname -r), PKG, PKGVER.
prepare_kernel() {
  local resolved current="$CACHE/kernels/$KERNEL.current"
  if ! resolved=$(resolve_pkg); then
    if [ -s "$current" ]; then
      resolved=$(cat "$current")
    else
      echo "$prog: apt does not know $META yet; running apt-get update" >&2
      as_root apt-get update -q >&2 || die "apt-get update failed (need root or sudo)"
      resolved=$(resolve_pkg) || die "cannot resolve $META to a kernel package"
    fi
  fi
  read -r PKG PKGVER <<<"$resolved"
  KDIR="$CACHE/kernels/${PKG}_${PKGVER}"
  if [ -f "$KDIR/ready" ] && [ -d "$KDIR/pkg/lib/modules/$(cat "$KDIR/kver")" ]; then
    KVER=$(cat "$KDIR/kver")
    if [ "$(cat "$KDIR/modules/extra-modules" 2>/dev/null)" != "$EXTRA_MODULES" ]; then
      echo "$prog: module list changed: pruning $KDIR/modules again" >&2
      rm -rf "$KDIR/modules.tmp"
      prune_modules "$KDIR/pkg" "$KVER" "$KDIR/modules.tmp"
      rm -rf "$KDIR/modules"
      mv "$KDIR/modules.tmp" "$KDIR/modules"
    fi
    echo "$resolved" >"$current"
    return
  fi

  local deb
  deb=$(ls "$CACHE/debs/${PKG}_${PKGVER//:/%3a}_"*.deb 2>/dev/null | head -n1 || true)
  if [ -z "$deb" ]; then
    if ! (cd "$CACHE/debs" && apt-get download -q "$PKG=$PKGVER" >&2); then
      # Lists older than the archive name a version it no longer serves:
      # refreshed once, the metapackage resolved again.
      echo "$prog: apt-get download $PKG=$PKGVER failed; running apt-get update" >&2
      as_root apt-get update -q >&2 || die "apt-get update failed (need root or sudo)"
      resolved=$(resolve_pkg) || die "cannot resolve $META to a kernel package"
      read -r PKG PKGVER <<<"$resolved"
      KDIR="$CACHE/kernels/${PKG}_${PKGVER}"
      (cd "$CACHE/debs" && apt-get download -q "$PKG=$PKGVER" >&2) ||
        die "apt-get download $PKG=$PKGVER failed"
    fi
    deb=$(ls "$CACHE/debs/${PKG}_${PKGVER//:/%3a}_"*.deb 2>/dev/null | head -n1 || true)
    [ -n "$deb" ] || die "downloaded .deb of $PKG not found in $CACHE/debs"
  fi
  echo "$prog: preparing $PKG $PKGVER in $KDIR" >&2

  rm -rf "$KDIR.tmp"
  mkdir -p "$KDIR.tmp"
  dpkg-deb -x "$deb" "$KDIR.tmp/pkg"
  local full="$KDIR.tmp/pkg"
  KVER=$(ls "$full/lib/modules")
  [ "$(echo "$KVER" | wc -w)" -eq 1 ] || die "unexpected module dirs in $deb: $KVER"
  [ -f "$full/boot/vmlinuz-$KVER" ] || die "no vmlinuz-$KVER in $deb"
  cp "$full/boot/vmlinuz-$KVER" "$KDIR.tmp/vmlinuz"
  # The package ships no modules.dep (its postinst makes it): make one to know
  # what IPVS needs.
  depmod -b "$full" "$KVER"

  prune_modules "$full" "$KVER" "$KDIR.tmp/modules"
  echo "$KVER" >"$KDIR.tmp/kver"
  echo "$resolved" >"$KDIR.tmp/package"
  touch "$KDIR.tmp/ready"
  rm -rf "$KDIR"
  mv "$KDIR.tmp" "$KDIR"
  echo "$resolved" >"$current"
}

