#!/usr/bin/env bash
# `make run`: Halo's main job. With a display, the workbench; without one, the quickstart
# training run (convnext_atto, 7 synthetic views, sp=2 CPU ranks, about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x build/bin/halo-workbench ]; then
  exec build/bin/halo-workbench
fi
echo "No display: training experiments/quickstart.json (runs go to runs/)."
exec build/bin/halo launch experiments/quickstart.json
