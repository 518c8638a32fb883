#!/usr/bin/env bash
# The GPU check (docs/guide/gpu-check.md): one command, five stages, one table.
#   packaging/gpu-check.sh [--gpu | --dry] [--stages a,b,c,d,e] [--budget SECONDS]
# On a machine with a CUDA GPU (the lent H200): (a) configure and build the headless preset
# with CUDA against .gpu-bundle (`make gpu-bundle` made it on the Debian machine) and the
# machine's own python3 torch; (b) the CUDA probe and a few test suites; (c) correctness on
# CUDA (sharded vs unsharded over ranks on the one GPU, NCCL at world size 1, bf16, fp16 with
# the loss scaler and a forced overflow); (d) memory of ConvNeXt-XL 7 x (3, 512, 2048) beside
# the published figures and the planner's predictions; (e) speed against timm eager and the
# GPU's own matmul rates. Without CUDA (CI) the same stages run as a DRY RUN on the CPU with
# tiny shapes and build/bin/halo (`make test` built it), and say what they skipped.
# Each stage runs under its own `timeout`, cut to what is left of the budget (gpu 560 s,
# dry 240 s), so a slow stage cannot eat the rest; the table is printed at the end and, when
# $OUT is set, written there with the JSON and the full log (gpu-check.{txt,json,log}).
# HALO_GPU_CHECK_BUILD: another build folder (default build-gpu; dry run: build);
# HALO_GPU_CHECK_WORK: the scratch folder (default build-gpu-check: runs, logs, results).
# Exit code 1 when a row of the table failed; in a dry run only when stage a or b failed or a
# stage broke or ran out of time (HALO_GPU_CHECK_STRICT=1: any row), since the other stages'
# failures there are engine findings on tiny CPU shapes, listed under the table.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

mode=auto
stages=a,b,c,d,e
budget=${HALO_GPU_CHECK_BUDGET:-}
while [ $# -gt 0 ]; do
  case $1 in
    --gpu) mode=gpu ;;
    --dry) mode=dry ;;
    --stages) stages=$2; shift ;;
    --budget) budget=$2; shift ;;
    -h | --help) sed -n '2,19p' "$0" | cut -c3-; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

t_start=$(date +%s)
say() { printf '[gpu-check] %s\n' "$*"; }

if [ "$mode" = auto ]; then
  mode=dry
  if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU' &&
    python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    mode=gpu
  fi
fi
if [ "$mode" = gpu ]; then
  [ ! -d /usr/local/cuda/bin ] || PATH=$PATH:/usr/local/cuda/bin
  python=$(command -v python3)
  build=${HALO_GPU_CHECK_BUILD:-$here/build-gpu}
  jobs=$(nproc)
  budget=${budget:-560}
  device=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1) ||
    device="GPU (nvidia-smi did not answer)"
  # Stage caps and the least each later stage is left (seconds).
  declare -A cap=([a]=300 [b]=45 [c]=60 [d]=200 [e]=130) keep=([a]=0 [b]=15 [c]=30 [d]=90 [e]=60)
else
  python=$here/.venv/bin/python
  [ -x "$python" ] || python=$(command -v python3)
  build=${HALO_GPU_CHECK_BUILD:-$here/build}
  jobs=2
  budget=${budget:-240}
  device="cpu ($(nproc) cores): dry run"
  declare -A cap=([a]=60 [b]=150 [c]=60 [d]=60 [e]=70) keep=([a]=0 [b]=20 [c]=25 [d]=25 [e]=25)
fi
work=${HALO_GPU_CHECK_WORK:-$here/build-gpu-check}
rm -rf "$work"
mkdir -p "$work/results" "$work/logs"
deadline=$((t_start + budget))
torch_version=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)
say "mode $mode on $(uname -n): $device; python $python (torch $torch_version); budget ${budget}s; work $work"

names=(build tests correctness memory speed)
letters=(a b c d e)
stage_runs=""
for i in "${!letters[@]}"; do
  s=${letters[$i]}
  name=${names[$i]}
  if [[ ",$stages," != *",$s,"* ]]; then
    stage_runs+="$name skipped not-selected-(--stages) 0 0;"
    continue
  fi
  later=0
  for j in "${!letters[@]}"; do
    if [ "$j" -gt "$i" ] && [[ ",$stages," == *",${letters[$j]},"* ]]; then later=$((later + keep[${letters[$j]}])); fi
  done
  now=$(date +%s)
  limit=$((deadline - now - later - 5))
  [ "$limit" -le "${cap[$s]}" ] || limit=${cap[$s]}
  if [ "$limit" -lt 10 ]; then
    say "stage $s ($name): skipped, ${limit}s left"
    stage_runs+="$name skipped no-time-left 0 0;"
    continue
  fi
  say "stage $s ($name): limit ${limit}s"
  t0=$(date +%s)
  rc=0
  timeout -k 15 "$limit" "$python" packaging/gpu/gpu_check.py "$name" --mode "$mode" --work "$work" \
    --deadline $((t0 + limit - 3)) --halo "$build/bin/halo" --build "$build" --bundle "$here/.gpu-bundle" \
    --python "$python" --jobs "$jobs" >"$work/logs/$s-$name.log" 2>&1 || rc=$?
  secs=$(($(date +%s) - t0))
  stage_runs+="$name ran $rc $secs $limit;"
  say "stage $s ($name): exit $rc after ${secs}s"
  if [ "$rc" -ne 0 ]; then tail -5 "$work/logs/$s-$name.log" | sed 's/^/    /'; fi
done

# The table's own test: render sample results and parse them back.
"$python" packaging/gpu/test_report.py >"$work/logs/test_report.log" 2>&1 || { cat "$work/logs/test_report.log"; exit 1; }
say "$(tail -1 "$work/logs/test_report.log")"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo "no git")
MODE=$mode DEVICE=$device TORCH=$torch_version COMMIT=$commit BUDGET=$budget T0=$t_start RUNS=$stage_runs \
  HOST=$(uname -n) "$python" - "$work/results/meta.json" <<'EOF'
import json, os, sys, time
stages = {}
for item in filter(None, os.environ["RUNS"].split(";")):
    name, kind, rc, secs, limit = item.split()
    stages[name] = ({"skipped": rc.replace("-", " ")} if kind == "skipped"
                    else {"rc": int(rc), "seconds": float(secs), "limit_s": int(limit)})
json.dump({"mode": os.environ["MODE"], "host": os.environ["HOST"], "device": os.environ["DEVICE"],
           "torch": os.environ["TORCH"], "commit": os.environ["COMMIT"], "budget_s": int(os.environ["BUDGET"]),
           "seconds": time.time() - int(os.environ["T0"]), "stages": stages}, open(sys.argv[1], "w"), indent=1)
EOF
fail_on=all
[ "$mode" = gpu ] || [ "${HALO_GPU_CHECK_STRICT:-0}" = 1 ] || fail_on=a,b
rc=0
"$python" packaging/gpu/report.py "$work" --text "$work/gpu-check.txt" --json "$work/gpu-check.json" \
  --fail-on "$fail_on" || rc=$?
if [ -n "${OUT:-}" ]; then
  cp "$work/gpu-check.txt" "$work/gpu-check.json" "$OUT/"
  for f in "$work"/logs/*.log "$work"/runs/*.log; do
    [ -f "$f" ] && { echo "===== $f"; tail -c 400000 "$f"; }
  done 2>/dev/null | tail -c 15000000 >"$OUT/gpu-check.log" || true
fi
exit "$rc"
