"""DTensor counterpart of `halo bench comm` (sp=2 row), plus an eager sp=1 baseline.

A ConvNeXt stage of `depth` timm blocks (dim 96, no downsample, no drop path), input
(B, C, H, W) fp32.  Distributed run: 2 ranks (gloo over loopback, 1 thread each), input is a
DTensor Shard(3) (width) over a 1-D CPU mesh, parameters Replicate.  The depthwise 7x7 conv
goes through DTensor's sharded convolution (torch/distributed/tensor/_tp_conv.py) which does
the halo exchange; its backward is patched at runtime (see patch_tp_conv) because stock
torch drops the input gradient.

Timed iteration (same as halo's CommBench): barrier, forward, .sum().backward(), gradient
sync of the parameters (Partial -> Replicate all-reduce), mean over iters after warmup.

Usage:
  python dtensor_stage.py                # sp=2 DTensor timing (rank 0 figure, JSON line)
  python dtensor_stage.py --check        # + correctness against an unsharded run
  python dtensor_stage.py --mode eager   # sp=1 eager single process timing
"""
import argparse
import json
import os
import socket
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


# --------------------------------------------------------------------------- model (timm)
class Block(nn.Module):
    # w_first: channels-last permute as (W, B, H, C) instead of timm's (B, H, W, C).  Same
    # math (everything after the conv is per pixel), but DTensor's nn.Linear flattens the
    # leading dims to (N, C) and refuses to flatten when the sharded dim (W) is not the
    # first of the flattened group; with W first the flatten is legal and stays Shard(0).
    w_first = False

    def __init__(self, dim, ls_init=1e-6):
        super().__init__()
        self.conv_dw = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(ls_init * torch.ones(dim))

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        x = x.permute(3, 0, 2, 1) if self.w_first else x.permute(0, 2, 3, 1)
        x = self.norm(x)
        x = self.fc2(F.gelu(self.fc1(x)))
        x = x * self.gamma
        x = x.permute(1, 3, 2, 0) if self.w_first else x.permute(0, 3, 1, 2)
        return shortcut + x


LS_INIT = 1e-6


def make_stage(dim, depth, w_first=False):
    torch.manual_seed(0)
    blocks = [Block(dim, LS_INIT) for _ in range(depth)]
    for b in blocks:
        b.w_first = w_first
    return nn.Sequential(*blocks)


def make_input(a):
    g = torch.Generator().manual_seed(1)
    return torch.randn(a.batch, a.dim, a.height, a.width, generator=g)


# --------------------------------------------------------------------------- the patch
def patch_tp_conv():
    """Fix DTensor's sharded-conv backward (torch 2.11 _tp_conv.py).

    Stock `_ring_send_recv_aggregate` computes the halo-summed input gradient but has no
    `return`, so `tp_convolution_backward` puts None in the grad_input slot and the input
    gradient is silently dropped.  We re-implement the aggregation (same ring exchange,
    same slicing, plus the return) and swap the aten.convolution_backward entry of the
    DTensor op dispatcher's custom-handler table for a handler that uses it.  Nothing in
    the venv is edited.
    """
    import torch.distributed.tensor._api as dtensor_api
    import torch.distributed.tensor._tp_conv as tpc

    def _ring_send_recv_aggregate(grad_in_tensor, d1, d2, left, right, rank, size):
        send_to_right = grad_in_tensor[:, :, :, -d2:].contiguous()
        send_to_left = grad_in_tensor[:, :, :, :d1].contiguous()
        recv_from_right = torch.zeros_like(send_to_left)
        recv_from_left = torch.zeros_like(send_to_right)
        ops = [
            dist.P2POp(dist.isend, send_to_right, right),
            dist.P2POp(dist.isend, send_to_left, left),
            dist.P2POp(dist.irecv, recv_from_left, left),
            dist.P2POp(dist.irecv, recv_from_right, right),
        ]
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        if rank == 0:
            grad_in_tensor = grad_in_tensor[:, :, :, :-d2]
            grad_in_tensor[:, :, :, -d1:] += recv_from_right
        elif rank == size - 1:
            grad_in_tensor = grad_in_tensor[:, :, :, d1:]
            grad_in_tensor[:, :, :, :d2] += recv_from_left
        else:
            grad_in_tensor = grad_in_tensor[:, :, :, d1:-d2]
            grad_in_tensor[:, :, :, -d1:] += recv_from_right
            grad_in_tensor[:, :, :, :d2] += recv_from_left
        return grad_in_tensor  # <- missing upstream

    tpc._ring_send_recv_aggregate = _ring_send_recv_aggregate  # tp_convolution_backward looks it up by module global
    # The dispatcher holds a reference to the handler function; re-register it so the table
    # definitely points at the module's (now-fixed) code path.
    disp = dtensor_api.DTensor._op_dispatcher
    disp._custom_op_handlers[torch.ops.aten.convolution_backward.default] = tpc.convolution_backward_handler


# --------------------------------------------------------------------------- helpers
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def grads_of(model):
    return {n: p.grad for n, p in model.named_parameters()}


# --------------------------------------------------------------------------- eager sp=1
def run_eager(a):
    torch.set_num_threads(1)
    model = make_stage(a.dim, a.depth, w_first=a.w_first_eager)
    x = make_input(a).requires_grad_(True)
    total = 0.0
    times = []
    for i in range(a.warmup + a.iters):
        for p in model.parameters():
            p.grad = None
        x.grad = None
        t0 = time.perf_counter()
        model(x).sum().backward()
        dt = (time.perf_counter() - t0) * 1e3
        if i >= a.warmup:
            total += dt
            times.append(dt)
    print(json.dumps({"mode": "eager_sp1", "step_ms": total / a.iters, "iters_ms": times,
                      "torch": torch.__version__, "threads": torch.get_num_threads()}))


# --------------------------------------------------------------------------- DTensor sp=2
def worker(rank, world, port, a, ret):
    global LS_INIT
    LS_INIT = a.ls_init
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Partial, Replicate, Shard, distribute_module, distribute_tensor

    if not a.no_patch:
        patch_tp_conv()
    mesh = init_device_mesh("cpu", (world,))

    model = make_stage(a.dim, a.depth, w_first=not a.timm_permute)
    distribute_module(model, mesh)  # default partition fn: every parameter -> Replicate
    full = make_input(a)
    x = distribute_tensor(full, mesh, [Shard(3)]).requires_grad_(True)
    params = list(model.named_parameters())

    def sync_grads():
        # Replicated params get Partial grads from the sharded activations; reduce them
        # (DTensor way: redistribute Partial -> Replicate = all-reduce per parameter).
        if a.bucketed:
            # DDP-style alternative: one flat all-reduce of the local partial sums
            locs = [p.grad.to_local() for _, p in params]
            flat = torch.cat([t.reshape(-1) for t in locs])
            dist.all_reduce(flat)
            off = 0
            for (_, p), t in zip(params, locs):
                n = t.numel()
                p.grad = torch.distributed.tensor.DTensor.from_local(
                    flat[off:off + n].view_as(t), mesh, [Replicate()], run_check=False)
                off += n
            return
        out = []
        for _, p in params:
            g = p.grad
            if g.placements[0].is_partial():
                g = g.redistribute(mesh, [Replicate()])
            out.append(g)
        for (_, p), g in zip(params, out):
            loc = g.to_local()
            if hasattr(loc, "wait"):
                loc = loc.wait()  # AsyncCollectiveTensor -> completed tensor
            p.grad = g
        return

    if a.comm_debug and rank == 0:
        from torch.distributed.tensor.debug import CommDebugMode
        cdm = CommDebugMode()
        with cdm:
            y = model(x)
            y.sum().backward()
        print("[rank0] forward+backward comms:", dict(cdm.get_comm_counts()), file=sys.stderr)
        print("[rank0] out placements:", y.placements, file=sys.stderr)
        print("[rank0] grad placements:", {n: p.grad.placements for n, p in params[:9]}, file=sys.stderr)
        for _, p in params:
            p.grad = None
        x.grad = None
    elif a.comm_debug:
        y = model(x)
        y.sum().backward()
        for _, p in params:
            p.grad = None
        x.grad = None

    times = []
    parts = []
    total = 0.0
    for i in range(a.warmup + a.iters):
        for _, p in params:
            p.grad = None
        x.grad = None
        dist.barrier()
        t0 = time.perf_counter()
        y = model(x).sum()
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        sync_grads()
        t3 = time.perf_counter()
        dt = (t3 - t0) * 1e3
        if i >= a.warmup:
            total += dt
            times.append(dt)
            parts.append([(t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3])

    res = {"rank": rank, "step_ms": total / a.iters, "iters_ms": times,
           "fwd_bwd_sync_ms": [sum(c) / len(parts) for c in zip(*parts)]}
    if a.check:
        gx = x.grad.full_tensor() if x.grad is not None else None
        gp = {}
        for n, p in params:
            g = p.grad
            if g.placements[0].is_partial():  # (only if sync did not run)
                g = g.redistribute(mesh, [Replicate()])
            gp[n] = g.full_tensor()
        if rank == 0:
            res["gx"] = gx
            res["gp"] = gp
    ret[rank] = res
    dist.barrier()
    dist.destroy_process_group()


def reference(a, iters_accum):
    torch.set_num_threads(1)
    model = make_stage(a.dim, a.depth)
    x = make_input(a).requires_grad_(True)
    model(x).sum().backward()
    return x.grad, grads_of(model)


def run_dtensor(a):
    world = a.sp
    port = free_port()
    with mp.Manager() as m:
        ret = m.dict()
        mp.spawn(worker, args=(world, port, a, ret), nprocs=world, join=True)
        ret = dict(ret)
    r0 = ret[0]
    out = {"mode": f"dtensor_sp{world}", "step_ms": r0["step_ms"], "iters_ms": r0["iters_ms"],
           "step_ms_per_rank": [ret[r]["step_ms"] for r in range(world)],
           "fwd_bwd_sync_ms_rank0": r0["fwd_bwd_sync_ms"],
           "bucketed": a.bucketed, "patched": not a.no_patch, "torch": torch.__version__}
    if a.check:
        rgx, rgp = reference(a, 1)
        gx = r0["gx"]
        chk = {}
        if gx is None:
            chk["input_grad"] = "MISSING (None)"
        else:
            d = (gx - rgx).abs().max().item()
            chk["input_grad"] = {"max_abs_diff": d, "ref_max_abs": rgx.abs().max().item(),
                                 "rel": d / rgx.abs().max().item()}
        worst = (None, 0.0)
        per = {}
        for n, g in r0["gp"].items():
            d = (g - rgp[n]).abs().max().item()
            rel = d / max(rgp[n].abs().max().item(), 1e-30)
            per[n] = {"max_abs_diff": d, "rel": rel}
            if rel > worst[1]:
                worst = (n, rel)
        chk["param_grads"] = per
        chk["worst_param_rel"] = worst
        chk["max_param_abs_diff"] = max(v["max_abs_diff"] for v in per.values())
        out["check"] = chk
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["dtensor", "eager"], default="dtensor")
    ap.add_argument("--sp", type=int, default=2)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--dim", type=int, default=96)
    ap.add_argument("--height", type=int, default=64)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--no-patch", action="store_true")
    ap.add_argument("--bucketed", action="store_true")
    ap.add_argument("--timm-permute", action="store_true", help="(B,H,W,C) permute in the DTensor run (fails in DTensor's linear)")
    ap.add_argument("--w-first-eager", action="store_true", help="eager baseline with the (W,B,H,C) permute")
    ap.add_argument("--comm-debug", action="store_true")
    ap.add_argument("--ls-init", type=float, default=1e-6, help="layer-scale init (1e-6 as halo; use 1.0 for a sharper grad check)")
    a = ap.parse_args()
    global LS_INIT
    LS_INIT = a.ls_init
    if a.mode == "eager":
        run_eager(a)
    else:
        run_dtensor(a)


if __name__ == "__main__":
    main()
