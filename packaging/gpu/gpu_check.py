#!/usr/bin/env python3
"""The stages of packaging/gpu-check.sh (standard library only; run by that script, each stage
in its own process under its own `timeout`).

  gpu_check.py STAGE --mode gpu|dry --work DIR --deadline EPOCH [--halo BIN] [--build DIR] [--jobs N]

STAGE: build (a), tests (b), correctness (c), memory (d), speed (e). Each writes
DIR/results/STAGE.json as it goes (so a stage stopped at its limit keeps what it measured):
{"stage", "title", "mode", "ran": [...], "skipped": [...], "rows": [row...]} with rows as
report.py prints them. In mode gpu the stages run the real shapes on the GPU; in mode dry
(no CUDA) the same code runs on the CPU with tiny shapes, and the memory and speed stages add
the planner's predictions for the real shapes.
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GiB = float(1 << 30)
# Published figures (DESIGN.md section 1): ConvNeXt-XL, 7 x (3, 512, 2048), AdamW, per GPU.
PUBLISHED_GIB = {"none": 43.28, "checkpoint": 11.89, "tp4": 7.21, "tp4+checkpoint": 3.05}
PUBLISHED_MS_1GPU_W1024 = 723.0
STRATEGIES = {  # label -> (parallel.strategy, sp, parallel.shard_state)
    "none": ("none", 1, "none"), "checkpoint": ("checkpoint", 1, "none"), "tp4": ("tp", 4, "none"),
    "tp4+checkpoint": ("tp+checkpoint", 4, "none"),
    # ZeRO 3 (issue 16): the 4 ranks also shard weights, gradients and AdamW's moments; measured
    # at fp16 only (the target), each beside the published figure of its row.
    "tp4+zero3": ("tp", 4, "weights"), "tp4+checkpoint+zero3": ("tp+checkpoint", 4, "weights")}
PUBLISHED_GIB.update({"tp4+zero3": PUBLISHED_GIB["tp4"], "tp4+checkpoint+zero3": PUBLISHED_GIB["tp4+checkpoint"]})
BASE_LABELS = ("none", "checkpoint", "tp4", "tp4+checkpoint")  # run at fp32 and fp16
ZERO_LABELS = ("tp4+zero3", "tp4+checkpoint+zero3")  # run at fp16
TITLES = {"build": "a build", "tests": "b CUDA tests", "correctness": "c correctness", "memory": "d memory",
          "speed": "e speed"}
LETTER = {"build": "a", "tests": "b", "correctness": "c", "memory": "d", "speed": "e"}


# --------------------------------------------------------------------------------------------
# Results, processes
# --------------------------------------------------------------------------------------------

class Stage:
    def __init__(self, name, args):
        self.name, self.args = name, args
        self.work = Path(args.work)
        self.path = self.work / "results" / f"{name}.json"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.data = {"stage": LETTER[name], "name": name, "title": TITLES[name], "mode": args.mode,
                     "ran": [], "skipped": [], "rows": [], "notes": []}
        self.save()

    def left(self):
        return self.args.deadline - time.time()

    def row(self, item, setting="", measured="", reference="", predicted="", error="", status="ok", **values):
        r = {"stage": LETTER[self.name], "item": item, "setting": setting, "measured": measured,
             "reference": reference, "predicted": predicted, "error": error, "status": status}
        if values:
            r["values"] = values
        self.data["rows"].append(r)
        self.save()
        return r

    def ran(self, what):
        self.data["ran"].append(what)
        self.save()

    def skip(self, what, why):
        self.data["skipped"].append(f"{what}: {why}")
        self.save()

    def note(self, text):
        self.data["notes"].append(text)
        self.save()

    def save(self):
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, default=str))
        tmp.replace(self.path)


LIVE = set()  # child processes (each in its own session), stopped with this process


def stop_children(signum=None, frame=None):
    for p in list(LIVE):
        kill(p)
    if signum is not None:
        sys.exit(124)


signal.signal(signal.SIGTERM, stop_children)


def log(msg):
    print(f"[gpu-check] {msg}", flush=True)


def run(cmd, timeout, env=None, cwd=None, quiet=False):
    """Runs cmd in its own session; on timeout the whole session is killed. (rc, output);
    rc 124 on timeout."""
    if not quiet:
        log("$ " + " ".join(shlex.quote(str(c)) for c in cmd))
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=env, cwd=cwd, start_new_session=True)
    LIVE.add(p)
    try:
        out, _ = p.communicate(timeout=max(1.0, timeout))
        return p.returncode, out
    except subprocess.TimeoutExpired:
        kill(p)
        out, _ = p.communicate()
        return 124, (out or "") + f"\n[gpu-check] stopped after {timeout:.0f} s"
    finally:
        LIVE.discard(p)


def kill(p):
    if p.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            pass


def compiler_launcher():
    """ccache in front of a direct compile, as the CMake build has it (settings included)."""
    cc = shutil.which("ccache")
    if not cc:
        return [], None
    env = dict(os.environ, CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime")
    return [cc], env


def tail(text, n=6):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return " / ".join(lines[-n:])[-600:]


def fmt_gib(b):
    return f"{b / GiB:.2f}" if b is not None else "-"


def fmt_rate(flops_per_s):
    return f"{flops_per_s / 1e12:.1f} TFLOP/s" if flops_per_s >= 1e12 else f"{flops_per_s / 1e9:.1f} GFLOP/s"


def rel_err(pred, meas):
    if pred is None or not meas:
        return ""
    return f"{100.0 * (pred / meas - 1.0):+.1f}%"


# --------------------------------------------------------------------------------------------
# halo launch / halo plan
# --------------------------------------------------------------------------------------------

class Halo:
    def __init__(self, st):
        self.st = st
        self.bin = st.args.halo
        if not Path(self.bin).exists():
            raise RuntimeError(f"no {self.bin}: " + ("stage a did not build it" if st.args.mode == "gpu"
                                                   else "run `make build` first"))
        self.exp_dir = st.work / "experiments"
        self.exp_dir.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ, OMP_NUM_THREADS="1")

    def experiment(self, name, cfg):
        p = self.exp_dir / f"{name}.json"
        p.write_text(json.dumps(cfg, indent=1))
        return p

    def start(self, exp, overrides, name, env_extra=None):
        """Starts `halo launch` (its own session); returns a handle for finish()."""
        run_dir = self.st.work / "runs" / name
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        cmd = [self.bin, "launch", str(exp), "--no-progress", "--runs", str(run_dir.parent), "--db",
               str(run_dir.parent / f"{name}.db"), "--set", f"run_dir={run_dir}"]
        for o in overrides:
            cmd += ["--set", o]
        log("$ " + " ".join(shlex.quote(str(c)) for c in cmd))
        logf = open(self.st.work / "runs" / f"{name}.log", "w")
        env = dict(self.env, **(env_extra or {}))
        p = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        LIVE.add(p)
        return {"p": p, "name": name, "run_dir": run_dir, "log": logf, "t0": time.time()}

    def finish(self, h, timeout):
        p = h["p"]
        try:
            rc = p.wait(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            kill(p)
            rc = 124
        LIVE.discard(p)
        h["log"].close()
        h["rc"], h["seconds"] = rc, time.time() - h["t0"]
        h["output"] = (self.st.work / "runs" / f"{h['name']}.log").read_text(errors="replace")
        h["events"] = read_events(h["run_dir"] / "events.jsonl")
        return h

    def launch(self, exp, overrides, name, timeout, env_extra=None):
        return self.finish(self.start(exp, overrides, name, env_extra), timeout)

    def plan(self, exp, overrides, devices=None, timeout=60):
        cmd = [self.bin, "plan", str(exp), "--json"]
        if devices:
            cmd += ["--devices", devices]
        for o in overrides:
            cmd += ["--set", o]
        rc, out = run(cmd, timeout, env=self.env, quiet=True)
        if rc != 0:
            raise RuntimeError(f"halo plan failed ({rc}): {tail(out)}")
        return json.loads(out[out.index("{"):])


def read_events(path):
    ev = []
    try:
        for line in Path(path).read_text(errors="replace").splitlines():
            try:
                ev.append(json.loads(line))
            except ValueError:
                pass
    except FileNotFoundError:
        pass
    return ev


def steps_by_rank(events):
    out = {}
    for e in events:
        if e.get("event") == "step":
            out.setdefault(e.get("rank", 0), []).append(e)
    return out


def failure_of(h):
    errs = [e for e in h["events"] if e.get("event") == "error"]
    if errs:
        msg = (errs[0].get("message") or "").strip().splitlines()
        return f"rank {errs[0].get('rank')}: {msg[0] if msg else ''}"[:160]
    return tail(h["output"], 3) if h["rc"] else ""


def real_experiment():
    return json.loads((REPO / "experiments" / "convnext_xl_seed.json").read_text())


# The final checkpoint every run writes is 4.2 GB for ConvNeXt-XL with AdamW (fp32 weights and
# moments); the memory and speed runs stop it with the fault tests' hook instead of writing it.
NO_FINAL_CHECKPOINT = {"HALO_TEST_FSIZE_LIMIT": str(1 << 20)}


def finished_steps(h, steps):
    """The run logged `steps` steps on every rank: its only failure may be the final
    checkpoint stopped by NO_FINAL_CHECKPOINT."""
    by = steps_by_rank(h["events"])
    return bool(by) and all(len(v) >= steps for v in by.values())


# --------------------------------------------------------------------------------------------
# Stage a: build
# --------------------------------------------------------------------------------------------

BUNDLE_HEADERS = ("nlohmann/", "CLI/", "gloo/", "gtest/", "gmock/", "sqlite3", "openssl/", "opencv2/")
BASE_LIBS = ("linux-vdso", "libc.so", "libm.so", "libstdc++.so", "libgcc_s.so", "ld-linux", "libpthread.so",
             "libdl.so", "librt.so")


def bundle_probe(st, bundle):
    """Compiles and links packaging/gpu/bundle_probe.cpp against the bundle only, checks from
    the dependency file and ldd that nothing third-party came from the system, runs it."""
    root = Path(bundle) / "root" / "usr"
    lib = root / "lib" / "x86_64-linux-gnu"
    if not (root / "include" / "nlohmann" / "json.hpp").exists():
        st.row("bundle probe", str(bundle), "no bundle: run `make gpu-bundle` first", status="fail")
        return False
    out = st.work / "bundle-probe"
    out.mkdir(exist_ok=True)
    cxx = os.environ.get("CXX", "c++")
    launcher, cenv = compiler_launcher()
    cmd = launcher + [cxx, "-std=c++20", "-O1", "-DFMT_HEADER_ONLY=1", "-MD", "-MF", out / "probe.d",
           "-isystem", root / "include", "-isystem", root / "include" / "x86_64-linux-gnu",
           "-isystem", root / "include" / "opencv4", REPO / "packaging" / "gpu" / "bundle_probe.cpp",
           "-o", out / "probe", "-L", lib, "-Wl,--disable-new-dtags", f"-Wl,-rpath,{lib}", f"-Wl,-rpath-link,{lib}",
           "-lopencv_imgcodecs", "-lopencv_imgproc", "-lopencv_core", "-lsqlite3", "-lcrypto", "-lgmock", "-lgtest",
           "-pthread"]
    t0 = time.time()
    rc, text = run(cmd, min(120, st.left()), env=cenv)
    if rc != 0:
        st.row("bundle probe", "compile + link against .gpu-bundle only", tail(text, 4), status="fail")
        return False
    deps = (out / "probe.d").read_text().replace("\\\n", " ").split()
    foreign = sorted({d for d in deps if any(h in d for h in BUNDLE_HEADERS) and str(root) not in str(Path(d).resolve())
                      and not d.startswith(str(root))})
    rc, ldd = run(["ldd", out / "probe"], 30, quiet=True)
    libs_outside = []
    for line in ldd.splitlines():
        name = line.strip().split(" ")[0]
        target = line.split("=>")[1].strip().split(" (")[0] if "=>" in line else ""
        if "not found" in line or (target and not target.startswith(str(lib)) and not name.startswith(BASE_LIBS)):
            libs_outside.append(f"{name} -> {target or 'not found'}")
    rc, text = run([out / "probe"], 60, env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"},
                   quiet=True)
    checks = [l.split()[2] for l in text.splitlines()
              if l.startswith("bundle probe:") and len(l.split()) > 3 and l.split()[3] in ("ok", "FAIL")
              and l.split()[2] != "all"]
    ok = rc == 0 and not foreign and not libs_outside
    detail = (f"{len(checks)} checks ({', '.join(checks)})" if rc == 0 else tail(text, 3))
    if foreign:
        detail += f"; headers from outside the bundle: {foreign[:4]}"
    if libs_outside:
        detail += f"; libraries from outside the bundle: {libs_outside[:4]}"
    st.row("bundle probe", "1 TU: compile, link, run against .gpu-bundle only", detail,
           reference=f"{time.time() - t0:.0f} s", status="pass" if ok else "fail")
    st.ran("bundle probe (compile + link + run against the bundle only)")
    return ok


def configure(st, build_dir, python, timeout):
    cmd = ["cmake", "--preset", "gpu", "-B", build_dir, f"-DHALO_PYTHON={python}",
           f"-DHALO_GPU_BUNDLE={st.args.bundle}"]
    t0 = time.time()
    rc, text = run(cmd, timeout, cwd=REPO)
    (st.work / "logs").mkdir(exist_ok=True)
    (st.work / "logs" / "configure.log").write_text(text)
    cache = Path(build_dir) / "CMakeCache.txt"
    found = {}
    if cache.exists():
        for line in cache.read_text().splitlines():
            k, _, v = line.partition("=")
            key = k.split(":")[0]
            if key.endswith("_DIR") and key.split("_DIR")[0] in ("nlohmann_json", "fmt", "CLI11", "GTest") \
                    or key in ("HALO_GLOO_INCLUDE", "HALO_OPENCV_INCLUDE", "HALO_OPENCV_core", "HALO_OPENCV_imgproc",
                               "HALO_OPENCV_imgcodecs", "SQLite3_INCLUDE_DIR", "SQLite3_LIBRARY"):
                found[key] = v
    outside = {k: v for k, v in found.items() if not v.startswith(str(Path(st.args.bundle).resolve()))}
    cuda = "CUDA path: on" in text
    ok = rc == 0 and not outside and len(found) >= 11 and cuda
    detail = (f"{len(found)} packages/paths from the bundle; " if rc == 0 else tail(text, 4) + "; ") + \
        ("CUDA path on" if cuda else "CUDA path OFF")
    if outside:
        detail += f"; NOT from the bundle: {outside}"
    st.row("configure", "cmake --preset gpu, HALO_CUDA=ON", detail, reference=f"{time.time() - t0:.0f} s",
           status="pass" if ok else "fail", found=found)
    st.ran("configure (cmake --preset gpu)")
    return rc == 0


def stage_build(st):
    a = st.args
    bundle_probe(st, a.bundle)
    if a.mode == "dry":
        scratch = st.work / "build-gpu-configure"
        shutil.rmtree(scratch, ignore_errors=True)
        configure(st, scratch, a.python, min(180, st.left()))
        shutil.rmtree(scratch, ignore_errors=True)
        st.skip("build", "dry run: no CUDA here; CI's `make test` built the default preset, whose build/bin/halo "
                "runs the remaining stages")
        return
    if not configure(st, a.build, a.python, min(120, st.left())):
        return
    # The test suites are not built here: the Debian machine's default build compiles the same
    # CUDA path (HALO_WITH_CUDA, the cu130 wheel) and CI runs them there; their build would
    # only eat this stage's minutes.
    targets = ["halo", "halo_gpu_probe"]
    t0 = time.time()
    rc, text = run(["cmake", "--build", a.build, "-j", str(a.jobs), "--target", *targets, "--", "-k", "0"],
                   st.left() - 5, cwd=REPO)
    (st.work / "logs" / "build.log").write_text(text)
    built = [t for t in targets if (Path(a.build) / "bin" / t).exists()]
    errors = [l for l in text.splitlines() if "error:" in l or l.startswith("FAILED:")]
    st.row("build", f"headless preset + CUDA, -j{a.jobs}, {len(targets)} targets",
           f"built {', '.join(built) or 'nothing'}" + (f"; {errors[0][:200]}" if errors else "") +
           ("; stopped at the stage limit" if rc == 124 else ""),
           reference=f"{time.time() - t0:.0f} s", status="pass" if len(built) == len(targets) else "fail")
    st.ran(f"build ({len(built)}/{len(targets)} targets)")
    halo = Path(a.build) / "bin" / "halo"
    if halo.exists():
        rc, ldd = run(["ldd", halo], 30, quiet=True)
        missing = [l.strip() for l in ldd.splitlines() if "not found" in l]
        rc2, ver = run([halo, "--version"], 30, quiet=True)
        st.row("halo runs", "ldd + halo --version", (ver.strip().splitlines() or ["?"])[-1][:80] +
               (f"; missing: {missing}" if missing else ""), status="pass" if rc2 == 0 and not missing else "fail")


# --------------------------------------------------------------------------------------------
# Stage b: CUDA tests
# --------------------------------------------------------------------------------------------

def probe_rows(st, probe, timeout):
    rc, text = run([probe], timeout)
    (st.work / "logs").mkdir(exist_ok=True)
    (st.work / "logs" / "gpu-probe.log").write_text(text)
    n = 0
    for line in text.splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        n += 1
        v = j.get("value")
        meas = j.get("detail", "")
        if isinstance(v, float):
            meas = f"{v:.2e}"
        elif isinstance(v, dict) and "name" in v:
            meas = f"{v['name']} sm_{v['capability']}, {v['total_bytes'] / GiB:.0f} GiB, CUDA {v['cuda_runtime']}, " \
                   f"cuDNN {v['cudnn']}, NCCL {v['nccl']}"
        elif isinstance(v, dict):
            meas = ", ".join(f"{k} {x / GiB:.2f} GiB" for k, x in v.items())
        st.row(j["check"], "halo_gpu_probe", meas if j["status"] != "skip" else j.get("detail", ""),
               reference=j.get("detail", "") if meas != j.get("detail", "") else "", status=j["status"],
               probe=j)
    if rc not in (0, 1) or n == 0:
        st.row("halo_gpu_probe", "", f"exit {rc}: {tail(text, 3)}", status="fail")
    st.ran(f"halo_gpu_probe ({n} checks)")


def probe_from_default_build(st):
    """Dry run: compile packaging/gpu/probe/GpuProbe.cpp with the flags build/ used for a core
    source (its precompiled header too) and link it like build/bin/halo: the probe compiles
    against today's core before any GPU time is spent, and its CPU controls run."""
    build = Path(st.args.build)
    cc_path = build / "compile_commands.json"
    ninja = build / "build.ninja"
    if not cc_path.exists() or not ninja.exists():
        st.skip("halo_gpu_probe", f"no {cc_path} (run make build first)")
        return None
    # core/model's flags: ConvNeXt.cpp's own entry, or in a unity build its unity file's.
    entry = next((e for e in json.loads(cc_path.read_text()) if e["file"].endswith("core/model/ConvNeXt.cpp") or
                  "/halo_model.dir/Unity/" in e["file"]), None)
    if entry is None:
        st.row("halo_gpu_probe compiles", "flags of build/ (default preset)",
               "no entry of core/model in compile_commands.json", status="fail")
        return None
    args = shlex.split(entry["command"])
    out_obj = st.work / "gpu-probe.o"
    src = REPO / "packaging" / "gpu" / "probe" / "GpuProbe.cpp"
    cmd, skip = [], False
    for i, t in enumerate(args):
        if skip:
            skip = False
            continue
        if t in ("-o", "-MF", "-MT", "-c"):
            skip = t != "-c"
            continue
        if t in ("-MD",) or t == entry["file"] or t.endswith("/ConvNeXt.cpp"):
            continue
        cmd.append(t)
    cmd += ["-c", str(src), "-o", str(out_obj)]
    launcher, cenv = compiler_launcher()
    rc, text = run(launcher + cmd, min(240, st.left() - 20), cwd=entry["directory"], env=cenv)
    if rc != 0:
        st.row("halo_gpu_probe compiles", "flags of build/ (default preset)", tail(text, 4), status="fail")
        return None
    # Link line of bin/halo from build.ninja.
    text_n = ninja.read_text()
    blk = text_n[text_n.index("build bin/halo:"):]
    blk = blk[:blk.index("\n\n")] if "\n\n" in blk else blk
    vals = {}
    for line in blk.splitlines()[1:]:
        k, _, v = line.strip().partition(" = ")
        vals[k] = v
    exe = st.work / "halo_gpu_probe"
    link = ["c++"] + shlex.split(vals.get("FLAGS", "")) + shlex.split(vals.get("LINK_FLAGS", "")) + \
        [str(out_obj), "-o", str(exe), "-Wl,--start-group"] + shlex.split(vals.get("LINK_LIBRARIES", "")) + \
        ["-Wl,--end-group"]
    link = [t for t in link if not t.startswith("-include") and "cmake_pch" not in t and t != "-Winvalid-pch"]
    rc, text = run(link, min(120, st.left() - 10), cwd=str(build))
    if rc != 0:
        st.row("halo_gpu_probe links", "like build/bin/halo", tail(text, 4), status="fail")
        return None
    st.row("halo_gpu_probe builds", "against build/ (default preset)", "compiled and linked", status="pass")
    return exe


def stage_tests(st):
    a = st.args
    if a.mode == "dry":
        exe = probe_from_default_build(st)
        if exe:
            probe_rows(st, exe, min(120, st.left()))
        st.skip("train_tests, memory_tests, parallel_tests", "dry run: CI's `make test` ran every suite just before")
        return
    probe = Path(a.build) / "bin" / "halo_gpu_probe"
    if probe.exists():
        probe_rows(st, probe, min(90, st.left() - 5))
    else:
        st.skip("halo_gpu_probe", "not built (stage a)")
    st.skip("train_tests, memory_tests, parallel_tests", "CPU tests: CI runs them in the Debian machine's build, "
            "which compiles the same CUDA path (HALO_WITH_CUDA)")


# --------------------------------------------------------------------------------------------
# Stage c: correctness
# --------------------------------------------------------------------------------------------

def tiny_experiment(device):
    return {"name": "gpu-check-tiny", "task": "convnext",
            "model": {"arch": "convnext_test", "num_classes": 10, "drop_path": 0.0},
            "data": {"source": "synthetic", "views": 2, "height": 64, "width": 256, "batch": 1, "workers": 1},
            "parallel": {"strategy": "none", "sp": 1, "dp": 1, "backend": "auto", "device": device,
                         "threads_per_rank": 1},
            "optim": {"name": "adamw", "lr": 0.001, "weight_decay": 0.05, "grad_clip": 1.0},
            "schedule": {"steps": 3, "warmup_steps": 0, "min_lr_ratio": 0.01},
            "train": {"accumulation": 1, "precision": "fp32", "seed": 0, "log_every": 1, "checkpoint_every": 0,
                      "eval_every": 0}}


def losses(h):
    """step -> list over ranks of (loss, loss_scale, skipped)."""
    out = {}
    for e in h["events"]:
        if e.get("event") == "step":
            loss = (e.get("losses") or {}).get("loss")
            out.setdefault(e["step"], []).append((loss, e.get("loss_scale"), e.get("skipped")))
    return out


def max_loss_diff(h, ref):
    a, b = losses(h), losses(ref)
    worst = 0.0
    for s, rows in b.items():
        r = rows[0][0]
        for (x, _, _) in a.get(s, [(None, None, None)]):
            if x is None or r is None:
                return float("inf")
            worst = max(worst, abs(x - r) / max(abs(r), 1e-12))
    return worst if a else float("inf")


def scaler_trace(ls):
    """The loss scaler's steps in order: (every rank agrees on each step's scale and skip,
    each step's skip per rank, each step's scales)."""
    steps = sorted(ls)
    agree = all(len({(r[1], bool(r[2])) for r in ls[s]}) == 1 for s in steps)
    return agree, [[bool(r[2]) for r in ls[s]] for s in steps], [sorted({r[1] for r in ls[s]}) for s in steps]


def leading_skips(ls):
    """(steps skipped before the first taken one, whether the loss scaler behaved): every rank
    agrees on each step's skip and scale; the scale starts at 65536 and halves after each
    skipped step; no step after the first taken one is skipped."""
    agree, per_rank, scale_sets = scaler_trace(ls)
    skipped = [sk[0] for sk in per_rank]
    lead = skipped.index(False) if False in skipped else len(skipped)
    scales = [sc[0] for sc in scale_sets]
    halving = all(scales[i] == 65536.0 / 2 ** i for i in range(min(lead + 1, len(scales))))
    return lead, agree and halving and lead < len(skipped) and not any(skipped[lead:])


def stage_correctness(st):
    a = st.args
    halo = Halo(st)
    gpu = a.mode == "gpu"
    dev = "cuda" if gpu else "cpu"
    # 1. halo verify (CPU, float64, Gloo): the CUDA build's engine is exact.
    for name, extra in (("verify sp2", ["--sp", "2"]),
                        ("verify sp4 + checkpoint", ["--sp", "4", "--checkpoint", "--input", "2,3,64,256"])):
        if st.left() < 20:
            st.skip(name, "no time left")
            continue
        rc, text = run([halo.bin, "verify", "--json", "--timeout", "120", *extra], min(150, st.left() - 15),
                       env=halo.env)
        try:
            j = json.loads(text[text.index("{"):text.rindex("}") + 1])
            st.row(f"halo {name}", "CPU float64, Gloo, convnext_test", f"max rel err {j['max_rel_error']:.1e}",
                   reference=f"<= {j['tolerance']:.0e}", status="pass" if j["ok"] else "fail",
                   max_rel_error=j["max_rel_error"])
        except (ValueError, KeyError):
            st.row(f"halo {name}", "CPU float64, Gloo", tail(text, 3), status="fail")
        st.ran(f"halo {name}")
    # 2. Launches on the device, all at once (tiny shapes; one GPU holds them all).
    exp = halo.experiment("tiny", tiny_experiment(dev))
    base = ["train.precision=fp32", "parallel.dp=1"]
    runs = {
        "ref": ["parallel.strategy=none", "parallel.sp=1", f"parallel.backend={'nccl' if gpu else 'gloo'}"] + base,
        "sp2": ["parallel.strategy=tp", "parallel.sp=2", "parallel.backend=gloo"] + base,
        "sp4ck": ["parallel.strategy=tp+checkpoint", "parallel.sp=4", "parallel.backend=gloo"] + base,
        # ZeRO on the device's tensors: gradients reduce-scattered in backward; each block's
        # weights freed and all-gathered back into the same storage (the caching allocator's).
        "zero2": ["parallel.strategy=tp", "parallel.sp=2", "parallel.backend=gloo",
                  "parallel.shard_state=gradients"] + base,
        "zero3ck": ["parallel.strategy=tp+checkpoint", "parallel.sp=2", "parallel.backend=gloo",
                    "parallel.shard_state=weights"] + base,
        "bf16": ["parallel.strategy=tp", "parallel.sp=2", "parallel.backend=gloo", "parallel.dp=1",
                 "train.precision=bf16"],
        "fp16": ["parallel.strategy=tp", "parallel.sp=2", "parallel.backend=gloo", "parallel.dp=1",
                 "train.precision=fp16"],
        "bf16ck": ["parallel.strategy=tp+checkpoint", "parallel.sp=2", "parallel.backend=gloo", "parallel.dp=1",
                   "train.precision=bf16"],
        "fp16ck": ["parallel.strategy=tp+checkpoint", "parallel.sp=2", "parallel.backend=gloo", "parallel.dp=1",
                   "train.precision=fp16"],
        # Forced overflow: AdamW with lr 1e4 (1e30 in fp32) moves every weight by ~lr in the
        # first step taken, so the forward after it overflows: every rank must skip every step
        # after that one (fp16: and halve the scale each time). 5 steps: fp16's first steps may
        # be skipped at the starting scale already.
        "overflow": ["parallel.strategy=tp", "parallel.sp=2", "parallel.backend=gloo", "parallel.dp=1",
                     "train.precision=fp16" if gpu else "train.precision=fp32",
                     "optim.lr=1e4" if gpu else "optim.lr=1e30", "optim.grad_clip=0", "schedule.steps=5",
                     "train.nonfinite=skip"],
    }
    if not gpu:
        st.skip("NCCL at world size 1", "no CUDA: the reference runs on Gloo")
        st.skip("fp16 + loss scaler", "fp16 needs CUDA (the overflow check runs in fp32 on the CPU instead)")
        runs.pop("fp16")
        runs.pop("fp16ck")
    handles = {k: halo.start(exp, v, f"c-{k}") for k, v in runs.items()}
    done = {k: halo.finish(h, st.left() - 5) for k, h in handles.items()}
    ref = done["ref"]
    ok_ref = ref["rc"] == 0 and len(losses(ref)) == 3
    st.row("launch sp1" + (" NCCL" if gpu else " Gloo"), f"{dev}, fp32, convnext_test 2x(3,64,256), 3 steps",
           f"losses {', '.join(f'{r[0][0]:.4f}' for r in losses(ref).values() if r[0][0] is not None)}"
           if ok_ref else failure_of(ref), reference="world size 1" + (", NCCL backend" if gpu else ""),
           status="pass" if ok_ref else "fail")
    for k, what, tol in (("sp2", "sp2 (2 ranks, Gloo host-staged) vs sp1", 1e-4),
                         ("sp4ck", "sp4 + checkpoint (4 ranks) vs sp1", 1e-4),
                         ("zero2", "sp2, shard_state gradients (ZeRO 2) vs sp1", 1e-4),
                         ("zero3ck", "sp2 + checkpoint, shard_state weights (ZeRO 3) vs sp1", 1e-4),
                         ("bf16", "bf16 autocast, sp2 vs fp32 sp1", 5e-2),
                         ("fp16", "fp16 + loss scaler, sp2 vs fp32 sp1", 2e-2),
                         ("bf16ck", "bf16 + checkpoint, sp2 vs fp32 sp1", 5e-2),
                         ("fp16ck", "fp16 + checkpoint, sp2 vs fp32 sp1", 2e-2)):
        if k not in done:
            continue
        h = done[k]
        ls = losses(h)
        d = max_loss_diff(h, ref)
        extra = ""
        ok = h["rc"] == 0 and ok_ref and d <= tol
        if k.startswith("fp16"):
            # As torch's GradScaler from 65536: the first steps may overflow and be skipped,
            # each halving the scale, on every rank alike; none after the first taken step.
            lead, ok_scaler = leading_skips(ls)
            extra = f"; {lead} leading step(s) skipped, scale {sorted({r[1] for rows in ls.values() for r in rows})}"
            ok = ok and ok_scaler
        st.row(f"launch {k}", f"{dev}: {what}, 3 steps", (f"max rel loss diff {d:.1e}" + extra) if h["rc"] == 0
               else failure_of(h), reference=f"<= {tol:.0e}", status="pass" if ok else "fail", max_rel_diff=d)
        st.ran(f"launch {k}")
    h = done["overflow"]
    ls = losses(h)
    agree, skipped, scales = scaler_trace(ls)
    steps = sorted(ls)
    taken = [i for i, sk in enumerate(skipped) if not any(sk)]
    first = taken[0] if taken else None
    # After the first step taken (lr 1e4 moves every weight), every later step is skipped on
    # both ranks; in fp16 the scale halves after each skipped step.
    ok = (h["rc"] == 0 and agree and first is not None and first + 1 < len(steps) and
          all(len(sk) == 2 and all(sk) for sk in skipped[first + 1:]))
    if gpu and ok:
        ok = all(len(scales[i]) == 1 and scales[i + 1][0] == scales[i][0] / (2 if all(skipped[i]) else 1)
                 for i in range(len(steps) - 1))
    seen = f"skipped per step and rank {skipped}, scale {scales}, ranks agree {agree}"
    st.row("forced overflow", ("fp16, sp2: lr 1e4 makes every step after the first taken overflow" if gpu else
                               "fp32, sp2: lr 1e30 makes every step after the first non-finite"),
           seen if h["rc"] == 0 or ls else failure_of(h),
           reference="every step after the first taken skipped on every rank" +
           ("; the scale halves at each" if gpu else ""),
           status="pass" if ok else "fail")
    st.ran("forced overflow")


# --------------------------------------------------------------------------------------------
# Stage d: memory
# --------------------------------------------------------------------------------------------

def gpu_memory_mib():
    rc, out = run(["nvidia-smi", "--query-gpu=memory.total,memory.used", "--format=csv,noheader,nounits"], 20,
                  quiet=True)
    if rc != 0:
        return None
    total, used = (float(x) for x in out.strip().splitlines()[0].split(","))
    return total, used


def strategy_overrides(label, precision, gpu, steps):
    strategy, sp, shard = STRATEGIES[label]
    backend = "gloo" if sp > 1 or not gpu else "nccl"  # NCCL cannot put several ranks on one GPU
    return [f"parallel.strategy={strategy}", f"parallel.sp={sp}", "parallel.dp=1", f"parallel.backend={backend}",
            f"parallel.shard_state={shard}",
            f"train.precision={precision}", f"schedule.steps={steps}", "schedule.warmup_steps=0",
            "train.checkpoint_every=0", "train.eval_every=0"]


def predicted(halo, exp, overrides):
    """The planner's prediction for exactly this setup: worst rank's peak and reserved."""
    p = halo.plan(exp, overrides)
    ranks = p["experiment_setup"]["ranks"]
    w = max(ranks, key=lambda r: r["peak"])
    return {"peak": w["peak"], "reserved": w["reserved"], "step_s": p["experiment_setup"]["step_s"],
            "activation_peak": w["activation_peak"]}


def measured_memory(h):
    by = steps_by_rank(h["events"])
    peak = reserved = 0
    for rank, evs in by.items():
        for e in evs:
            if e["step"] == 0:
                continue  # warm-up (optimizer state appears at its end)
            m = e.get("memory", {})
            peak = max(peak, m.get("peak", 0))
            reserved = max(reserved, m.get("reserved", 0))
    return peak, reserved


def stage_memory(st):
    a = st.args
    halo = Halo(st)
    gpu = a.mode == "gpu"
    real = real_experiment()
    real_exp = halo.experiment("real", real)
    precisions = ["fp32", "fp16"]
    labels = list(STRATEGIES)
    setups = [(prec, lab) for prec in precisions for lab in BASE_LABELS] + [("fp16", lab) for lab in ZERO_LABELS]
    if os.environ.get("HALO_GPU_CHECK_MEMORY"):  # a second call's subset, e.g. "fp32:checkpoint,fp16:tp4+zero3"
        setups = [tuple(x.split(":", 1)) for x in os.environ["HALO_GPU_CHECK_MEMORY"].split(",")]
        st.note(f"HALO_GPU_CHECK_MEMORY: only {setups}")
    shape = f"{real['data']['views']}x(3,{real['data']['height']},{real['data']['width']})"
    # The planner's predictions for the real shapes (no GPU needed).
    preds = {}
    for prec, lab in setups:
        ov = strategy_overrides(lab, prec, True, 2)
        try:
            preds[(prec, lab)] = predicted(halo, real_exp, ov)
        except Exception as e:  # noqa: BLE001 - reported in the table
            preds[(prec, lab)] = None
            st.note(f"halo plan {prec} {lab}: {e}")
    st.ran(f"halo plan for the real shapes ({len(setups)} setups)")
    if not gpu:
        for prec, lab in setups:
            p = preds[(prec, lab)]
            st.row(f"memory {lab}", f"{prec}, {shape}, AdamW; GiB peak / reserved",
                   "dry run: not measured", reference=f"{PUBLISHED_GIB[lab]:.2f} GiB",
                   predicted=f"{fmt_gib(p['peak'])} / {fmt_gib(p['reserved'])}" if p else "plan failed",
                   status="plan", predicted_peak=p and p["peak"], predicted_reserved=p and p["reserved"])
        # The same code path on the CPU with tiny shapes: counted allocator, RSS.
        tiny = dict(real, model=dict(real["model"], arch="convnext_atto"),
                    data=dict(real["data"], height=64, width=256), parallel=dict(real["parallel"], device="cpu"))
        tiny_exp = halo.experiment("memory-tiny", tiny)
        configs = [(lab, "fp32") for lab in BASE_LABELS]
        st.skip("fp16 memory runs", "fp16 needs CUDA")
        handles = []
        for lab, prec in configs:
            ov = strategy_overrides(lab, prec, False, 2)
            handles.append((lab, prec, ov, halo.start(tiny_exp, ov, f"d-{lab}-{prec}")))
        for lab, prec, ov, h in handles:
            halo.finish(h, st.left() - 5)
            peak, reserved = measured_memory(h)
            try:
                p = predicted(halo, tiny_exp, ov)
            except Exception:  # noqa: BLE001
                p = None
            ok = h["rc"] == 0 and peak > 0
            st.row(f"memory {lab} (tiny)", f"{prec}, cpu, convnext_atto 7x(3,64,256)",
                   f"peak {peak / 2**20:.1f} MiB" if ok else failure_of(h),
                   predicted=f"{p['peak'] / 2**20:.1f} MiB" if p else "", error=rel_err(p and p["peak"], peak),
                   status="dry" if ok else "fail")
        st.ran("memory runs on the CPU with tiny shapes (counting allocator)")
        return
    # GPU: every setup in its own processes, several at once while their predicted reserved
    # memory (plus a CUDA context each) fits; each process's peak is its own allocator's.
    mem = gpu_memory_mib()
    total_mib, used_mib = mem if mem else (140000.0, 0.0)
    budget = (total_mib - used_mib) * 2**20 * 0.85
    ctx = 1.0 * GiB
    todo = []
    for prec, lab in setups:
        p = preds[(prec, lab)]
        sp = STRATEGIES[lab][1]
        need = sp * ((p["reserved"] if p else PUBLISHED_GIB[lab] * GiB * 1.3) + ctx)
        todo.append((need, prec, lab))
    todo.sort(reverse=True)
    waves = []
    for item in todo:
        for w in waves:
            if sum(x[0] for x in w) + item[0] <= budget:
                w.append(item)
                break
        else:
            waves.append([item])
    st.note(f"GPU free {budget / 0.85 / GiB:.0f} GiB; {len(waves)} wave(s): " +
            "; ".join(", ".join(f"{p} {l}" for _, p, l in w) for w in waves))
    retry = []

    def run_batch(batch, alone):
        if st.left() < 30:
            for _, prec, lab in batch:
                st.skip(f"memory {prec} {lab}", "no time left in the stage")
            return
        handles = [(prec, lab, halo.start(real_exp, strategy_overrides(lab, prec, True, 2), f"d-{lab}-{prec}",
                                          NO_FINAL_CHECKPOINT)) for _, prec, lab in batch]
        for prec, lab, h in handles:
            halo.finish(h, st.left() - 5)
            peak, reserved = measured_memory(h)
            fail = failure_of(h)
            if not finished_steps(h, 2) and "out of memory" in fail.lower() and not alone:
                retry.append((0, prec, lab))
                st.note(f"{prec} {lab}: out of memory beside other runs; again alone")
                continue
            p = preds[(prec, lab)]
            ok = finished_steps(h, 2) and peak > 0
            st.row(f"memory {lab}", f"{prec}, {shape}, AdamW, {STRATEGIES[lab][1]} rank(s) on 1 GPU; "
                   "GiB peak / reserved", f"{fmt_gib(peak)} / {fmt_gib(reserved)}" if ok else fail,
                   reference=f"{PUBLISHED_GIB[lab]:.2f} GiB",
                   predicted=f"{fmt_gib(p['peak'])} / {fmt_gib(p['reserved'])}" if p else "",
                   error=rel_err(p and p["peak"], peak) + (" / " + rel_err(p["reserved"], reserved) if p else ""),
                   status="ok" if ok else "fail", peak=peak, reserved=reserved,
                   predicted_peak=p and p["peak"], predicted_reserved=p and p["reserved"],
                   published_gib=PUBLISHED_GIB[lab], seconds=h["seconds"], alone=alone)
            st.ran(f"memory {prec} {lab}")

    for w in waves:
        run_batch(w, len(w) == 1)
    for item in retry:
        run_batch([item], True)
    # The table in a fixed order (fp32 then fp16; none, checkpoint, tp4, tp4+checkpoint).
    order = {f"memory {lab}": i for i, lab in enumerate(labels)}
    st.data["rows"].sort(key=lambda r: (0 if r["setting"].startswith("fp32") else 1, order.get(r["item"], 9)))
    st.save()
    st.note("measured = max over ranks and measured steps of max_memory_allocated (peak since the step's start) / "
            "reserved at the step's end (MemoryTracker::cuda); published = NVIDIA/NIO figure; predicted = "
            "halo plan for the same setup (peak / reserved)")


# --------------------------------------------------------------------------------------------
# Stage e: speed
# --------------------------------------------------------------------------------------------

def torch_bench(st, what, extra, timeout):
    py = st.args.python
    rc, text = run([py, REPO / "packaging" / "gpu" / "torch_bench.py", what, "--mode", st.args.mode, *extra],
                   timeout, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    (st.work / "logs").mkdir(exist_ok=True)
    (st.work / "logs" / f"torch-{what}.log").write_text(text)
    res = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
    if rc != 0 and not res:
        raise RuntimeError(f"torch_bench {what}: exit {rc}: {tail(text, 3)}")
    return res


def stage_speed(st):
    a = st.args
    halo = Halo(st)
    gpu = a.mode == "gpu"
    real = real_experiment()
    if gpu:
        speed = dict(real, data=dict(real["data"], width=1024))  # the published 1-GPU point: width 1024
        steps, timm_arch = 4, "convnext_xlarge"
    else:
        speed = dict(real, model=dict(real["model"], arch="convnext_atto"),
                     data=dict(real["data"], views=2, height=64, width=128), parallel=dict(real["parallel"], device="cpu"))
        steps, timm_arch = 2, "convnext_atto"
    d = speed["data"]
    shape = f"{d['views']}x(3,{d['height']},{d['width']})"
    images = d["views"] * d["batch"]
    exp = halo.experiment("speed", speed)
    # 1. Matrix rates of this device (the ceilings of model FLOPs utilisation).
    rates = {}
    try:
        for r in torch_bench(st, "matmul", [], min(60, st.left() - 10)):
            rates[r["dtype"]] = r["tflops"]
            st.row(f"matmul {r['dtype']}", f"{r['n']}^3 {r['device']}, median of {r['reps']}",
                   fmt_rate(r["tflops"] * 1e12), reference=r.get("reference", ""), status="ok" if gpu else "dry")
        st.ran("matmul rates (torch)")
    except Exception as e:  # noqa: BLE001
        st.row("matmul", "", str(e)[:300], status="fail")
    # 2. Model FLOPs of one step (torch's FLOP counter on timm's model, forward + backward).
    flops = None
    try:
        r = torch_bench(st, "flops", ["--arch", timm_arch, "--shape", f"{images},3,{d['height']},{d['width']}"],
                        min(90, st.left() - 10))
        flops = r[0]["flops"]
        st.row("model FLOPs/step", f"{timm_arch} {shape}, 3 x forward",
               f"{flops / 1e12:.2f} TFLOP" if flops >= 1e12 else f"{flops / 1e9:.2f} GFLOP",
               reference="torch.utils.flop_counter (forward)", status="ok" if gpu else "dry")
    except Exception as e:  # noqa: BLE001
        st.note(f"FLOP count failed: {e}")
    # 3. Halo: none and checkpoint, fp32 and bf16, one at a time.
    halo_ms = {}
    need = 40 if gpu else 12  # seconds a run needs
    for prec in ("fp32", "bf16"):
        for lab in ("none", "checkpoint"):
            if st.left() < need:
                st.skip(f"halo {lab} {prec}", "no time left")
                continue
            ov = strategy_overrides(lab, prec, gpu, steps)
            try:
                p = predicted(halo, exp, ov)
            except Exception:  # noqa: BLE001
                p = None
            h = halo.launch(exp, ov, f"e-{lab}-{prec}", st.left() - need + 10, NO_FINAL_CHECKPOINT if gpu else None)
            evs = [e for e in steps_by_rank(h["events"]).get(0, []) if e["step"] > 0]
            if not evs:
                st.row(f"halo {lab}", f"{prec}, {shape}", failure_of(h), status="fail")
                continue
            ms = sorted(e["time_ms"]["total"] for e in evs)[len(evs) // 2]
            halo_ms[(lab, prec)] = ms
            mfu = ""
            ceiling = rates.get("bf16" if prec == "bf16" else "tf32")
            if flops and ceiling:
                mfu = f", MFU {100 * flops / (ms / 1e3) / (ceiling * 1e12):.0f}% of {'bf16' if prec == 'bf16' else 'TF32'}"
            st.row(f"halo {lab}", f"{prec}, {shape}, 1 GPU" if gpu else f"{prec}, cpu, {shape}",
                   f"{ms:.0f} ms, {images / (ms / 1e3):.1f} img/s{mfu}",
                   reference=f"{PUBLISHED_MS_1GPU_W1024:.0f} ms (published)" if gpu and lab == "none" else "",
                   predicted=f"{p['step_s'] * 1e3:.0f} ms" if p else "", error=rel_err(p and p["step_s"] * 1e3, ms),
                   status="ok" if gpu else "dry", step_ms=ms, steps=[e["time_ms"] for e in evs])
            st.ran(f"halo {lab} {prec}")
    # 4. timm eager on the same device, same shapes, as a ratio.
    if st.left() < 20:
        st.skip("timm eager", "no time left")
        return
    try:
        res = torch_bench(st, "timm", ["--arch", timm_arch, "--shape", f"{images},3,{d['height']},{d['width']}",
                                       "--steps", str(steps - 1), "--deadline", str(a.deadline - 5)],
                          st.left() - 3)
    except Exception as e:  # noqa: BLE001
        st.row("timm eager", "", str(e)[:300], status="fail")
        return
    for r in res:
        key = ("checkpoint" if r["checkpoint"] else "none", r["precision"])
        ours = halo_ms.get(key)
        ratio = f"halo/timm {ours / r['step_ms']:.2f}x" if ours else ""
        mfu = ""
        ceiling = rates.get("bf16" if r["precision"] == "bf16" else "tf32")
        if flops and ceiling:
            mfu = f", MFU {100 * flops / (r['step_ms'] / 1e3) / (ceiling * 1e12):.0f}%"
        st.row(f"timm {key[0]}", f"{r['precision']}, {r['layout']}, {shape}",
               f"{r['step_ms']:.0f} ms, {images / (r['step_ms'] / 1e3):.1f} img/s{mfu}, "
               f"peak {r['peak_bytes'] / GiB:.2f} GiB", reference=ratio, status="ok" if gpu else "dry", **r)
    st.ran("timm eager")


# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage", choices=list(TITLES))
    ap.add_argument("--mode", choices=["gpu", "dry"], required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--deadline", type=float, required=True)
    ap.add_argument("--halo", default=str(REPO / "build" / "bin" / "halo"))
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--bundle", default=str(REPO / ".gpu-bundle"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    st = Stage(a.stage, a)
    fn = {"build": stage_build, "tests": stage_tests, "correctness": stage_correctness, "memory": stage_memory,
          "speed": stage_speed}[a.stage]
    try:
        fn(st)
    except Exception as e:  # noqa: BLE001 - the table says what broke
        import traceback
        traceback.print_exc()
        st.row(f"stage {a.stage}", "", f"{type(e).__name__}: {e}"[:300], status="fail")
    return 0


if __name__ == "__main__":
    sys.exit(main())
