# shellcheck shell=bash
# The reference peers of the director daemon (sourced by .ci/setup): Debian's
# keepalived (issue 25's side-by-side) and etcd (issue 26's fleet), with the
# shared libraries keepalived needs that a build machine may lack. Never
# installed (the packages start daemons): each .deb is downloaded at its pinned
# version into the VM cache's debs/, checked against its pinned sha256, and
# unpacked into peers/, where .ci/vm/initramfs.bash finds usr/sbin/keepalived,
# usr/bin/etcd, usr/bin/etcdctl and usr/lib/x86_64-linux-gnu/. Idempotent:
# a stamp per package and version.
#
# The libraries: what `ldd keepalived` did not find on a Debian 12 machine
# after .ci/setup (libnftnl, net-snmp's), what those need (libpci, libwrap,
# libsensors, libperl). etcd and etcdctl are Go programs linked to libc only.
#
# A pin: "package version sha256". When Debian replaces a version (a point
# release, a security update), the download or the checksum fails here with
# what to do: download the new version once, `sha256sum` it, write both below.
PEER_PINS=(
  "keepalived 1:2.2.7-1+b2 171b3bcb759a6b96f97ef5a06f02d14320bcb9e918d5163414daca7534c6b2ca"
  "etcd-server 3.4.23-4+b4 3a9445d4560ad6de1c375756b2a17d97713df44cbd20a658c871fe108af7ef5d"
  "etcd-client 3.4.23-4+b4 db3a484d5d924b50bf71f459ee544ecd7b11c25dc2f6becc0c50352d67299cc8"
  "libnftnl11 1.2.4-2 9e619e1470a1915264e906020f3bfc046fd8458043b1342686d997b5078213af"
  "libsnmp40 5.9.3+dfsg-2+deb12u1 bf91bd54cc35e2d790216b05f4d0d1331649e8e90ec8441849a137adeed5d9a3"
  "libpci3 1:3.9.0-4 75519023eb1f0cdc556709b109765e2ea36f6e5c66b8ca94cec45843b3e3bee7"
  "libwrap0 7.6.q-32 cbce2669a3ba4d74cfdc52b14f38014893e23d85a33d109a3422c342eefc55f8"
  "libsensors5 1:3.6.0-7.1 b7eb91dce728fbb9203aec8b22637303b29821c3384e5f78a8ff348b4e44efe3"
  "libperl5.36 5.36.0-7+deb12u4 ed8480b621ad574c25aea30d36194d0133ea74093756ecbe3dff157d0510ef7f"
)

# fetch_peers CACHE: downloads, checks and unpacks every pinned package into
# CACHE/peers. Returns 1 (after saying why) on a package apt does not know, a
# failed download (.ci/setup then refreshes the lists and calls it again) or
# a checksum that differs from its pin.
fetch_peers() {
  local cache=$1 peers="$1/peers" pin pkg ver sum deb got
  mkdir -p "$cache/debs" "$peers"
  for pin in "${PEER_PINS[@]}"; do
    read -r pkg ver sum <<<"$pin"
    [ -f "$peers/.$pkg-$ver" ] && continue
    deb="$cache/debs/${pkg}_${ver//:/%3a}_amd64.deb"
    if [ ! -f "$deb" ]; then
      if ! apt-cache show "$pkg" >/dev/null 2>&1; then
        echo "ci/setup: apt does not know $pkg" >&2
        return 1
      fi
      (cd "$cache/debs" && apt-get download -q "$pkg=$ver" >&2) || {
        echo "ci/setup: apt-get download $pkg=$ver failed: the package lists may be older than" \
          "the archive, or Debian replaced that version (then pin the candidate, apt-cache policy" \
          "$pkg, and its sha256 in .ci/lib/peers.bash)" >&2
        return 1
      }
    fi
    got=$(sha256sum "$deb" | cut -d' ' -f1)
    if [ "$got" != "$sum" ]; then
      echo "ci/setup: $deb has sha256 $got, pinned $sum in .ci/lib/peers.bash;" \
        "not unpacked (delete it to download it again, or pin the new sum if Debian rebuilt it)" >&2
      return 1
    fi
    dpkg-deb -x "$deb" "$peers"
    touch "$peers/.$pkg-$ver"
  done
}
