#!/usr/bin/env python3
"""PyTorch measurements of packaging/gpu-check.sh's speed stage, one JSON object per line
(each printed as soon as it is measured, so a stopped run keeps what it had):

  torch_bench.py matmul --mode gpu|dry          bf16, TF32 and fp32 matrix rates (TFLOP/s)
  torch_bench.py flops --arch A --shape N,C,H,W model FLOPs of one training step: 3 x the
                                                forward's, counted by torch.utils.flop_counter on
                                                'meta' (its backward count of depthwise convs is
                                                not the groups-aware one: 8x the forward here)
  torch_bench.py timm --arch A --shape ... --steps S [--deadline EPOCH]
                                                timm eager training steps (AdamW, grad clip 1.0,
                                                loss as Halo's: views' mean logits, cross
                                                entropy): fp32/bf16 x NCHW/channels-last, and
                                                activation checkpointing in the faster layout
  torch_bench.py kernels --arch A --shape ... --precision P --layout L
                                                one timm step after a warm-up under torch's
                                                profiler: the GPU kernels with the most time
                                                (the peer of `halo bench step --profile`)
On mode dry (no GPU) everything runs on the CPU with small sizes.
"""
import argparse
import json
import statistics
import time

import torch


def out(**kv):
    print(json.dumps(kv), flush=True)


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def matmul(a):
    gpu = a.mode == "gpu" and torch.cuda.is_available()
    dev = torch.device("cuda" if gpu else "cpu")
    n, reps = (8192, 10) if gpu else (512, 5)
    refs = {"bf16": "788 measured here (KINDS.md), ~990 datasheet", "tf32": "~495 datasheet",
            "fp32": "~67 datasheet"} if gpu else {}
    cases = [("bf16", torch.bfloat16, False), ("tf32", torch.float32, True), ("fp32", torch.float32, False)]
    for name, dtype, tf32 in cases:
        if not gpu and name == "tf32":
            continue  # no TF32 on a CPU: its fp32 rate stands in (see below)
        torch.backends.cuda.matmul.allow_tf32 = tf32
        g = torch.Generator(device=dev).manual_seed(0)
        xs = [torch.randn(n, n, device=dev, dtype=dtype, generator=g) for _ in range(2)]
        ys = [torch.randn(n, n, device=dev, dtype=dtype, generator=g) for _ in range(2)]
        for i in range(3):
            xs[i % 2] @ ys[i % 2]
        sync(dev)
        times = []
        for i in range(reps):
            if gpu:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                xs[i % 2] @ ys[i % 2]
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e) / 1e3)
            else:
                t0 = time.perf_counter()
                xs[i % 2] @ ys[i % 2]
                times.append(time.perf_counter() - t0)
        t = statistics.median(times)
        out(dtype=name, n=n, reps=reps, device=torch.cuda.get_device_name() if gpu else "cpu",
            tflops=2 * n ** 3 / t / 1e12, seconds=t, reference=refs.get(name, ""))
        if not gpu and name == "fp32":
            out(dtype="tf32", n=n, reps=reps, device="cpu", tflops=2 * n ** 3 / t / 1e12, seconds=t,
                reference="cpu: fp32 rate")
    torch.backends.cuda.matmul.allow_tf32 = False


def loss_of(model, x, views):
    logits = model(x).float()  # (N*V, classes)
    logits = logits.view(-1, views, logits.shape[-1]).mean(1)
    target = torch.zeros(logits.shape[0], dtype=torch.long, device=x.device)
    return torch.nn.functional.cross_entropy(logits, target)


def flops(a):
    import timm
    from torch.utils.flop_counter import FlopCounterMode
    shape = [int(v) for v in a.shape.split(",")]
    with torch.device("meta"):
        model = timm.create_model(a.arch, num_classes=10)
        x = torch.randn(*shape)
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        loss_of(model, x, shape[0])
    fwd = counter.get_total_flops()
    out(arch=a.arch, shape=shape, forward_flops=fwd, flops=3 * fwd)


def timm_steps(a):
    import timm
    gpu = a.mode == "gpu" and torch.cuda.is_available()
    dev = torch.device("cuda" if gpu else "cpu")
    shape = [int(v) for v in a.shape.split(",")]
    views = shape[0]
    torch.manual_seed(0)
    model = timm.create_model(a.arch, num_classes=10).to(dev)
    model.train()
    x = torch.randn(*shape, device=dev)
    results = {}

    def measure(precision, layout, checkpoint):
        if a.deadline and time.time() > a.deadline - 10:
            return None
        fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
        m = model.to(memory_format=fmt)
        m.set_grad_checkpointing(checkpoint)
        xi = x.contiguous(memory_format=fmt)
        opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.05)
        if gpu:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        times = []
        for i in range(1 + a.steps):
            sync(dev)
            t0 = time.perf_counter()
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
                loss = loss_of(m, xi, views)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            sync(dev)
            if i > 0:
                times.append((time.perf_counter() - t0) * 1e3)
        del opt
        r = dict(arch=a.arch, precision=precision, layout=layout, checkpoint=checkpoint, shape=shape,
                 step_ms=statistics.median(times), steps_ms=times,
                 peak_bytes=torch.cuda.max_memory_allocated() if gpu else 0, loss=float(loss.detach()))
        out(**r)
        results[(precision, layout, checkpoint)] = r
        return r

    # On the CPU (dry run) only the code path matters: NCHW, and bf16 (emulated, slow) once.
    layouts = ("nchw", "channels_last") if gpu else ("nchw",)
    for precision in ("fp32", "bf16"):
        for layout in layouts:
            measure(precision, layout, False)
    for precision in ("fp32", "bf16") if gpu else ("fp32",):
        done = [results[k] for k in results if k[0] == precision and not k[2]]
        if done:
            measure(precision, min(done, key=lambda r: r["step_ms"])["layout"], True)


def kernels(a):
    import timm
    from torch.profiler import ProfilerActivity, profile
    gpu = a.mode == "gpu" and torch.cuda.is_available()
    dev = torch.device("cuda" if gpu else "cpu")
    shape = [int(v) for v in a.shape.split(",")]
    fmt = torch.channels_last if a.layout == "channels_last" else torch.contiguous_format
    torch.manual_seed(0)
    model = timm.create_model(a.arch, num_classes=10).to(dev).to(memory_format=fmt)
    x = torch.randn(*shape, device=dev).contiguous(memory_format=fmt)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)

    def step():
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = loss_of(model, x, shape[0])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    sync(dev)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    with profile(activities=acts) as prof:
        step()
        sync(dev)
    key = "device_time_total" if gpu else "self_cpu_time_total"
    rows = sorted(prof.key_averages(), key=lambda e: getattr(e, key), reverse=True)
    gpu_rows = [e for e in rows if gpu and e.device_type == torch.autograd.DeviceType.CUDA] or rows
    total = sum(getattr(e, key) for e in gpu_rows) / 1e3
    out(arch=a.arch, precision=a.precision, layout=a.layout, total_ms=total,
        top=[{"name": e.key[:120], "ms": getattr(e, key) / 1e3, "calls": e.count} for e in gpu_rows[:25]])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["matmul", "flops", "timm", "kernels"])
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="bf16")
    ap.add_argument("--layout", choices=["nchw", "channels_last"], default="nchw")
    ap.add_argument("--mode", choices=["gpu", "dry"], default="gpu")
    ap.add_argument("--arch", default="convnext_xlarge")
    ap.add_argument("--shape", default="7,3,512,1024")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--deadline", type=float, default=0)
    a = ap.parse_args()
    torch.set_num_threads(max(1, min(torch.get_num_threads(), 4)))
    {"matmul": matmul, "flops": flops, "timm": timm_steps, "kernels": kernels}[a.what](a)


if __name__ == "__main__":
    main()
