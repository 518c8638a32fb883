#!/usr/bin/env bash
# Installs a built Halo .deb on a fresh Debian 12 (debootstrap minbase in a chroot) with apt,
# so its declared dependencies are all it gets, then runs check-package.sh --installed there.
set -euo pipefail
deb=${1:?usage: packaging/fresh-install-check.sh halo_VERSION_ARCH.deb [MIRROR]}
mirror=${2:-http://deb.debian.org/debian}
say() { echo "fresh-install: $*"; }
fail() { echo "fresh-install: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap and chroot); run: sudo $0 $deb"
command -v debootstrap >/dev/null || fail "debootstrap is not installed; run: apt-get install debootstrap"
[ -f "$deb" ] || fail "no such package file: $deb"

root=$(mktemp -d /tmp/halo-fresh.XXXXXX)
chmod 755 "$root"  # apt downloads as _apt
cleanup() {
  for m in dev/shm dev/pts dev proc; do mountpoint -q "$root/$m" && umount -l "$root/$m"; done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT

start=$(date +%s)
say "debootstrap --variant=minbase bookworm $root ($mirror)"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
  { tail -20 "$root.debootstrap.log" >&2; fail "debootstrap failed (log above)"; }
rm -f "$root.debootstrap.log"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount -t devpts devpts "$root/dev/pts" 2>/dev/null || true
mount -t tmpfs tmpfs "$root/dev/shm"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"
pkg="/tmp/$(basename "$deb")"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

say "packages before: $(in_root dpkg-query -W -f='.\n' | wc -l)"
in_root apt-get update -qq >/dev/null
# Default apt behaviour (Recommends included), as a user installing the package would get.
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >"$root/tmp/apt.log" 2>&1 ||
  { tail -30 "$root/tmp/apt.log" >&2; fail "apt-get install $pkg failed"; }
say "installed $(basename "$deb") with apt: $(in_root dpkg-query -W -f='.\n' | wc -l) packages now"

# The same run checks as for an extracted package, on the installed one, inside the chroot.
cp "$(dirname "$0")/check-package.sh" "$root/tmp/check-package.sh"
in_root bash /tmp/check-package.sh --installed || fail "the installed package fails its checks (above)"
say "OK in $(( $(date +%s) - start )) s"
