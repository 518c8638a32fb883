#!/usr/bin/env python3
"""The Python peer of `halo bench step --vs timm`: Halo's classification step in timm.

  timm_step.py SPEC.json OUT.json

SPEC (written by Halo from the experiment): arch, num_classes, drop_path, views, images
(batch x views), height, width, lr, weight_decay, beta1, beta2, eps, grad_clip, threads,
precision (fp32 | bf16), checkpoint (bool), steps, seed, profile (bool, optional). The loss is
Halo's: the views' mean logits, cross entropy. OUT gets {"torch", "timm", "steps": [{"forward",
"backward", "optim", "total"} in ms, ...]}; the first step is a warm-up like Halo's. With profile,
the second step runs under torch.profiler and OUT's "profile" has Halo's StepProfile fields:
step_ms, ops_self_ms, ops [{name, self_ms, total_ms, calls}] by self time. Exit 3 when timm is
missing.
"""
import json
import sys
import time


def main():
    spec = json.load(open(sys.argv[1]))
    import torch
    try:
        import timm
    except ImportError as e:
        print(f"timm is not installed in {sys.executable}: {e}", file=sys.stderr)
        sys.exit(3)
    torch.set_num_threads(int(spec["threads"]))
    torch.manual_seed(int(spec["seed"]))
    model = timm.create_model(spec["arch"], num_classes=int(spec["num_classes"]),
                              drop_path_rate=float(spec["drop_path"]))
    model.train()
    model.set_grad_checkpointing(bool(spec["checkpoint"]))
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=spec["lr"], betas=(spec["beta1"], spec["beta2"]), eps=spec["eps"],
                            weight_decay=spec["weight_decay"])
    views = int(spec["views"])
    x = torch.randn(int(spec["images"]), 3, int(spec["height"]), int(spec["width"]))  # (B*V, 3, H, W)
    target = torch.randint(0, int(spec["num_classes"]), (x.shape[0] // views,))
    bf16 = spec["precision"] == "bf16"
    steps = []
    profiler = None
    for k in range(int(spec["steps"])):
        if k == 1 and spec.get("profile"):
            profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
            profiler.__enter__()
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.float().view(-1, views, logits.shape[-1]).mean(1), target)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        if spec["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(params, spec["grad_clip"])
        opt.step()
        opt.zero_grad(set_to_none=True)
        t3 = time.perf_counter()
        steps.append({"forward": (t1 - t0) * 1e3, "backward": (t2 - t1) * 1e3, "optim": (t3 - t2) * 1e3,
                      "total": (t3 - t0) * 1e3, "loss": float(loss.detach())})
        if profiler is not None and k == 1:
            profiler.__exit__(None, None, None)
    out = {"torch": torch.__version__, "timm": timm.__version__, "steps": steps}
    if profiler is not None:
        ops = [{"name": e.key, "self_ms": e.self_cpu_time_total / 1e3, "total_ms": e.cpu_time_total / 1e3,
                "calls": e.count} for e in profiler.key_averages()
               if not e.key.startswith("autograd::engine::evaluate_function")]
        ops.sort(key=lambda o: -o["self_ms"])
        out["profile"] = {"step_ms": steps[1]["total"], "ops_self_ms": sum(o["self_ms"] for o in ops), "ops": ops}
    json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
