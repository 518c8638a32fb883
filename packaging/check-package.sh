#!/usr/bin/env bash
# Checks a built Halo .deb the way a fresh machine would use it: its control data and file
# list, then extracts it into a temporary root and runs the programs from there (`halo
# --version`, a 2-step, 2-rank training run, halo-workbench offscreen for 5 s) with every
# library resolved inside the package or from Debian, never from a build tree or .venv.
set -euo pipefail
deb=${1:?usage: packaging/check-package.sh halo_VERSION_ARCH.deb | INSTALL_ROOT (holding usr/)}
fail() { echo "check-package: FAIL: $*" >&2; exit 1; }
say() { echo "check-package: $*"; }

if [ -d "$deb" ]; then
  # An install tree (cmake --install BUILD --prefix ROOT/usr): only the run checks below.
  root=$(cd "$deb" && pwd)
  gui=0; [ -x "$root/usr/bin/halo-workbench" ] && gui=1
  say "install tree $root ($(du -sh "$root" | cut -f1))"
else
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
  gui=0
  if grep -qx ./usr/bin/halo-workbench <<<"$files"; then
    gui=1
    for f in ./usr/share/applications/halo-workbench.desktop ./usr/share/icons/hicolor/scalable/apps/halo-workbench.svg; do
      grep -qx "$f" <<<"$files" || fail "missing $f"
    done
    grep -q "\blibqt6widgets6\b" <<<"$depends" || fail "Depends lacks libqt6widgets6"
  fi
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  dpkg-deb -x "$deb" "$root"
fi
bin="$root/usr/bin"
# A clean environment: no LD_LIBRARY_PATH, no Python, HOME inside the temporary root.
run() { env -i PATH=/usr/bin:/bin HOME="$root/home" HALO_DB="$root/home/history.db" "$@"; }
rm -rf "$root/home"; mkdir -p "$root/home"
for p in "$bin"/*; do
  deps=$(run ldd "$p")
  if grep -q "not found" <<<"$deps"; then echo "$deps" >&2; fail "$(basename "$p"): unresolved libraries"; fi
  if grep -E "\.venv|/build[^/]*/|site-packages" <<<"$deps"; then fail "$(basename "$p") loads libraries from outside the package"; fi
done
grep -q "$root/usr/bin/../lib/halo/libtorch_cpu.so\|$root/usr/lib/halo/libtorch_cpu.so" <<<"$(run ldd "$bin/halo")" ||
  fail "halo does not load the bundled libtorch_cpu.so"
say "$(run "$bin/halo" --version)"
run "$bin/halo" launch --no-progress "$root/usr/share/halo/experiments/quickstart.json" \
  --set schedule.steps=2 --set schedule.warmup_steps=1 --set run_dir="$root/home/run" >"$root/home/launch.txt" 2>&1 ||
  { cat "$root/home/launch.txt" >&2; fail "a 2-step run with the packaged halo failed"; }
say "$(tail -1 "$root/home/launch.txt")"
if [ "$gui" = 1 ]; then
  set +e
  run QT_QPA_PLATFORM=offscreen timeout 5 "$bin/halo-workbench" >"$root/home/gui.txt" 2>&1
  rc=$?
  set -e
  # 124: still running its event loop after 5 s (started fine); anything else is a failure.
  [ "$rc" = 124 ] || { cat "$root/home/gui.txt" >&2; fail "halo-workbench exited with $rc"; }
  say "halo-workbench ran offscreen for 5 s"
fi
say "OK"
