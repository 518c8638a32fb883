#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build, run and test Halo: Debian packages
# and the project-local .venv (pinned torch wheel = LibTorch). Idempotent; seconds when done.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

log() { printf '[bootstrap] %s\n' "$*"; }

# --- Debian packages -------------------------------------------------------------------
mapfile -t wanted < <(grep -vE '^\s*(#|$)' packaging/debian-packages.txt)
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- Python .venv with the pinned torch wheel -------------------------------------------
py=${HALO_PYTHON:-python3}
stamp=.venv/.halo-requirements
want=$(cat packaging/requirements*.txt | sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $($py --version)"
  $py -m venv .venv
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing Python packages (torch wheel is large; pip caches it)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r packaging/requirements.txt
  # The OpenLane-V2 devkit pins ancient numpy/scipy; it is a reference client only,
  # so it goes in without its pins (its imports are satisfied by the packages above).
  if [ -f packaging/requirements-nodeps.txt ]; then
    .venv/bin/python -m pip install -q --no-deps -r packaging/requirements-nodeps.txt
  fi
  echo "$want" > "$stamp"
fi
log "ready: $(.venv/bin/python -c 'import torch; print("torch", torch.__version__)')"
