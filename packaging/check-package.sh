#!/usr/bin/env bash
# Checks a built Halo .deb the way a fresh machine would use it: its control data and file
# list, then runs the programs with every library resolved inside the package or from Debian.
#   check-package.sh FILE.deb      control data, then dpkg-deb -x into a temporary root and run
#   check-package.sh ROOT          an install tree (cmake --install BUILD --prefix ROOT/usr)
#   check-package.sh --installed   the package installed in this system (fresh-install-check.sh)
# The run checks: ldd, `halo --version`, a 2-step 2-rank run, `halo runs list`, the desktop
# entry's program offscreen for 5 s; never with a build tree or .venv on the library path.
set -euo pipefail
arg=${1:?usage: packaging/check-package.sh halo_VERSION_ARCH.deb | INSTALL_ROOT (holding usr/) | --installed}
fail() { echo "check-package: FAIL: $*" >&2; exit 1; }
say() { echo "check-package: $*"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$arg" = --installed ]; then
  root=""
  say "installed package $(dpkg-query -W -f='${Package} ${Version}' halo)"
elif [ -d "$arg" ]; then
  root=$(cd "$arg" && pwd)
  say "install tree $root ($(du -sh "$root" | cut -f1))"
else
  deb=$arg
  say "$(du -h "$deb" | cut -f1) $deb"
  depends=$(dpkg-deb -f "$deb" Depends)
  say "Depends: $depends"
  for d in libc6 libstdc++6 libsqlite3-0; do
    grep -q "\b$d\b" <<<"$depends" || fail "Depends lacks $d"
  done
  files=$(dpkg-deb -c "$deb" | awk '{print $6}')
  for f in ./usr/bin/halo ./usr/lib/halo/libtorch_cpu.so ./usr/lib/halo/libc10.so ./usr/lib/halo/libgomp.so.1; do
    grep -qx "$f" <<<"$files" || fail "missing $f"
  done
  if grep -qx ./usr/bin/halo-workbench <<<"$files"; then
    for f in ./usr/share/applications/halo-workbench.desktop ./usr/share/icons/hicolor/scalable/apps/halo-workbench.svg; do
      grep -qx "$f" <<<"$files" || fail "missing $f"
    done
    grep -q "\blibqt6widgets6\b" <<<"$depends" || fail "Depends lacks libqt6widgets6"
  fi
  root="$work/root"
  dpkg-deb -x "$deb" "$root"
fi
bin="$root/usr/bin"
# A clean environment: no LD_LIBRARY_PATH, no Python, HOME in a temporary folder.
mkdir -p "$work/home"
run() { env -i PATH="$bin:/usr/bin:/bin" HOME="$work/home" HALO_DB="$work/home/history.db" "$@"; }
for p in "$bin"/halo "$bin"/halo-workbench; do
  [ -e "$p" ] || continue
  deps=$(run ldd "$p")
  if grep -q "not found" <<<"$deps"; then echo "$deps" >&2; fail "$(basename "$p"): unresolved libraries"; fi
  if grep -E "\.venv|/build[^/]*/|site-packages" <<<"$deps"; then fail "$(basename "$p") loads libraries from outside the package"; fi
  if [ "$(basename "$p")" = halo ]; then
    grep -q "$root/usr/bin/../lib/halo/libtorch_cpu.so\|$root/usr/lib/halo/libtorch_cpu.so" <<<"$deps" ||
      fail "halo does not load the bundled libtorch_cpu.so"
  fi
done
say "$(run "$bin/halo" --version)"
run "$bin/halo" launch --no-progress "$root/usr/share/halo/experiments/quickstart.json" \
  --set schedule.steps=2 --set schedule.warmup_steps=1 --set run_dir="$work/home/run" >"$work/launch.txt" 2>&1 ||
  { cat "$work/launch.txt" >&2; fail "a 2-step, 2-rank run with the packaged halo failed"; }
say "$(tail -1 "$work/launch.txt")"
run "$bin/halo" runs list >/dev/null || fail "halo runs list failed after the run"

if [ -x "$bin/halo-workbench" ]; then
  desktop="$root/usr/share/applications/halo-workbench.desktop"
  [ -f "$desktop" ] || fail "missing $desktop"
  exe=$(grep -m1 '^Exec=' "$desktop" | cut -d= -f2 | cut -d' ' -f1)
  [ -x "$bin/$exe" ] || fail "the desktop entry runs '$exe', which is not in $bin"
  set +e
  run QT_QPA_PLATFORM=offscreen timeout 5 "$exe" >"$work/gui.txt" 2>&1
  rc=$?
  set -e
  # 124: still running its event loop after 5 s (started fine); anything else is a failure.
  [ "$rc" = 124 ] || { cat "$work/gui.txt" >&2; fail "halo-workbench exited with $rc"; }
  say "$exe (the desktop entry's Exec) ran offscreen for 5 s"
fi
say "OK"
