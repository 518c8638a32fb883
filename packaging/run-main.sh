#!/usr/bin/env bash
# `make run`: Halo's main job. With a display, the workbench; without one, the engine's
# demonstration: a ConvNeXt step sharded over 2 CPU ranks, checked against one process.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x build/bin/halo-workbench ]; then
  exec build/bin/halo-workbench
fi
echo "No display: running the width-sharded engine check (convnext_atto, 2 views of 128x256, sp=2)."
exec build/bin/halo verify --arch convnext_atto --input 2,3,128,256 --sp 2 --dtype float32
