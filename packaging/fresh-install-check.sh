#!/usr/bin/env bash
# Installs a built Halo .deb on a fresh Debian 12 (debootstrap minbase in a chroot) with apt,
# so its declared dependencies are all it gets, then runs halo and halo-workbench there.
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

in_root test -x /usr/bin/halo || fail "/usr/bin/halo missing after install"
say "$(in_root halo --version)"
in_root halo launch --no-progress /usr/share/halo/experiments/quickstart.json \
  --set schedule.steps=2 --set schedule.warmup_steps=1 --set run_dir=/root/run >"$root/tmp/launch.txt" 2>&1 ||
  { cat "$root/tmp/launch.txt" >&2; fail "a 2-step, 2-rank run with the installed halo failed"; }
say "$(tail -1 "$root/tmp/launch.txt")"
in_root halo runs list >/dev/null || fail "halo runs list failed after the run"

if in_root test -x /usr/bin/halo-workbench; then
  in_root test -f /usr/share/applications/halo-workbench.desktop || fail "desktop entry missing"
  exec_line=$(grep -m1 '^Exec=' "$root/usr/share/applications/halo-workbench.desktop" | cut -d= -f2 | cut -d' ' -f1)
  in_root sh -c "command -v $exec_line" >/dev/null || fail "desktop entry runs '$exec_line', not on PATH"
  set +e
  in_root env QT_QPA_PLATFORM=offscreen timeout 5 halo-workbench >"$root/tmp/gui.txt" 2>&1
  rc=$?
  set -e
  # 124: still in its event loop after 5 s (it started); anything else is a failure.
  [ "$rc" = 124 ] || { cat "$root/tmp/gui.txt" >&2; fail "halo-workbench exited with $rc"; }
  say "halo-workbench (desktop entry Exec=$exec_line) ran offscreen for 5 s"
fi
say "OK in $(( $(date +%s) - start )) s"
