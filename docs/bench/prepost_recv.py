"""Why sp=2's halo exchanges wait: Gloo's send is written by the sender's event-loop thread
unless the peer's "receive ready" note has already arrived, and on two busy cores that thread
waits for a core. Two processes, one thread each, exchange 215,040 bytes (the quickstart's
halo) around a fixed matrix product, 300 times: receives posted with the send (as Halo posts
them today) or one exchange ahead. Run: .venv/bin/python docs/bench/prepost_recv.py
"""
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ITERS, FLOATS = 300, 53760


def run(rank, ahead, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    peer, send = 1 - rank, torch.randn(FLOATS)
    for m in (128, 256, 384):
        a = torch.randn(m, m)
        bufs = [torch.empty(FLOATS) for _ in range(2)]
        nxt = dist.irecv(bufs[0], peer) if ahead else None
        waits = []
        for i in range(ITERS):
            if ahead:
                cur, nxt = nxt, dist.irecv(bufs[(i + 1) % 2], peer)
            else:
                cur = dist.irecv(bufs[0], peer)
            s = dist.isend(send, peer)
            for _ in range(4):
                a @ a  # the overlapped work
            t = time.perf_counter()
            cur.wait()
            s.wait()
            waits.append(time.perf_counter() - t)
        if ahead:
            dist.isend(send, peer).wait()
            nxt.wait()
        waits.sort()
        if rank == 0:
            print(f"receives {'one exchange ahead' if ahead else 'with the send':<18} product {m:3d}: "
                  f"wait median {waits[ITERS // 2] * 1e3:.2f} p90 {waits[ITERS * 9 // 10] * 1e3:.2f} "
                  f"sum {sum(waits) * 1e3:.0f} ms")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    for ahead, port in ((False, 29541), (True, 29542)):
        mp.spawn(run, args=(ahead, port), nprocs=2)
