#!/usr/bin/env bash
# The soak (not part of `make test`): one long CPU run of 8 ranks (sp 4 x dp 2) with a reader
# polling the run history the whole time; then checks that no metric row was lost (rows =
# steps x keys), that no rank's RSS grew more than 2 % after warm-up, and PRAGMA integrity_check.
# Usage: packaging/soak.sh [STEPS] [OUT_DIR]   (defaults: 500, a fresh folder under /tmp)
# Model: convnext_test (tests' tiny ConvNeXt), 1 view of 32 x 128, batch 1 per dp group.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-500}
out=${2:-$(mktemp -d /tmp/halo-soak.XXXXXX)}
halo=${HALO:-$here/build/bin/halo}
python=${PYTHON:-$here/.venv/bin/python}
warmup=${SOAK_WARMUP:-$(( steps / 5 ))}
[ -x "$halo" ] || { echo "soak: no $halo (make build first)"; exit 2; }
[ -x "$python" ] || python=python3
mkdir -p "$out"
db=$out/history.db
cat >"$out/soak.json" <<EOF
{
  "name": "soak", "task": "convnext", "run_dir": "$out/run",
  "model": {"arch": "convnext_test", "num_classes": 4},
  "data": {"source": "synthetic", "views": 1, "height": 32, "width": 128, "batch": 1},
  "parallel": {"strategy": "tp", "sp": 4, "dp": 2, "threads_per_rank": 1},
  "optim": {"name": "adamw", "lr": 0.001},
  "schedule": {"steps": $steps, "warmup_steps": 10},
  "train": {"seed": 1, "log_every": 1, "checkpoint_every": $(( steps / 2 ))}
}
EOF
echo "soak: $steps steps, 8 ranks (sp 4 x dp 2), convnext_test 1x32x128, in $out"
t0=$(date +%s)
"$halo" launch --no-progress --db "$db" "$out/soak.json" >"$out/launch.log" 2>&1 &
launcher=$!
# The reader: a second process opening the history read-only every 0.2 s while the launcher writes.
"$python" - "$db" "$out/reader.json" "$launcher" <<'EOF' &
import json, os, sqlite3, sys, time
db, out, launcher = sys.argv[1], sys.argv[2], int(sys.argv[3])
polls = errors = most = 0
first_error = ""
def alive():
    try:
        os.kill(launcher, 0)
        return True
    except OSError:
        return False
while alive():
    if os.path.exists(db):
        try:
            c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            n = c.execute("SELECT COUNT(*) FROM metrics").fetchone()[0]
            c.execute("SELECT step, key, value FROM metrics ORDER BY step DESC LIMIT 50").fetchall()
            c.close()
            polls += 1
            if n < most:
                raise RuntimeError(f"metric rows went down from {most} to {n}")
            most = n
        except Exception as e:  # a reader must never see an error
            errors += 1
            first_error = first_error or repr(e)
    time.sleep(0.2)
json.dump({"polls": polls, "errors": errors, "first_error": first_error}, open(out, "w"))
EOF
reader=$!
set +e
wait "$launcher"; code=$?
wait "$reader"
set -e
seconds=$(( $(date +%s) - t0 ))
tail -3 "$out/launch.log"
"$python" - "$out" "$db" "$steps" "$warmup" "$code" "$seconds" <<'EOF'
import json, sqlite3, sys
out, db, steps, warmup, code, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
ok = code == 0
print(f"launcher exit code {code}, {seconds} s ({steps / max(seconds, 1):.2f} steps/s)")
c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
(run,) = c.execute("SELECT MAX(id) FROM runs").fetchone()
rows = c.execute("SELECT COUNT(*) FROM metrics WHERE run_id=?", (run,)).fetchone()[0]
keys = c.execute("SELECT COUNT(DISTINCT key) FROM metrics WHERE run_id=?", (run,)).fetchone()[0]
nsteps = c.execute("SELECT COUNT(DISTINCT step) FROM metrics WHERE run_id=?", (run,)).fetchone()[0]
integrity = c.execute("PRAGMA integrity_check").fetchone()[0]
status = c.execute("SELECT status FROM runs WHERE id=?", (run,)).fetchone()[0]
print(f"history: run {run} {status}; metric rows {rows} = {nsteps} steps x {keys} keys "
      f"(expected {steps} x {keys} = {steps * keys}); integrity_check: {integrity}")
ok &= rows == steps * keys and nsteps == steps and integrity == "ok" and status == "FINISHED"
rss = {}
for line in open(f"{out}/run/events.jsonl"):
    e = json.loads(line)
    if e.get("event") == "step":
        rss.setdefault(e["rank"], {})[e["step"]] = e["memory"]["rss"]
print(f"RSS per rank after warm-up (step {warmup}) to the end (step {steps - 1}):")
print(f"{'rank':>4} {'at warm-up MiB':>15} {'last MiB':>9} {'max MiB':>8} {'growth':>7}")
worst = 0.0
for r in sorted(rss):
    s = rss[r]
    base, last = s[warmup], s[steps - 1]
    top = max(v for k, v in s.items() if k >= warmup)
    growth = (top - base) / base
    worst = max(worst, growth)
    print(f"{r:>4} {base / 2**20:>15.1f} {last / 2**20:>9.1f} {top / 2**20:>8.1f} {100 * growth:>6.2f}%")
ok &= len(rss) == 8 and worst <= 0.02
reader = json.load(open(f"{out}/reader.json"))
print(f"reader: {reader['polls']} polls, {reader['errors']} errors {reader['first_error']}")
ok &= reader["errors"] == 0 and reader["polls"] > 0
print("soak:", "PASS" if ok else "FAIL", f"(worst RSS growth {100 * worst:.2f} %, limit 2 %)")
sys.exit(0 if ok else 1)
EOF
