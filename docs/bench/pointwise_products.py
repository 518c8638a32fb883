"""fc1's product at each quickstart stage as Halo's `gemm` kernel runs it (mm on the pixel rows:
since stop 50 GELU adds the fp32 bias as it reads the product; addmm, the bias included, as it
was before) and as timm's conv_mlp and Halo's `onednn` kernel run it (a 1x1 conv on the
channels-last (B, C, H, W) view of the same data).

One thread, fastest of 15 calls after 3 warm-ups. Where the conv is much faster, oneDNN beats
the BLAS GEMM on this CPU and timm's one-process step gains on Halo's.
"""
import time

import torch

torch.set_num_threads(1)


def best_ms(f, n=15, warmup=3):
    for _ in range(warmup):
        f()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


for B, H, W, C in [(28, 16, 64, 40), (28, 8, 32, 80), (28, 4, 16, 160), (28, 2, 8, 320)]:
    x, w, b = torch.randn(B, H, W, C), torch.randn(4 * C, C), torch.randn(4 * C)
    rows, image = x.reshape(-1, C), x.permute(0, 3, 1, 2)  # (B*H*W, C); (B, C, H, W) channels-last
    mm = best_ms(lambda: torch.mm(rows, w.t()))
    addmm = best_ms(lambda: torch.addmm(b, rows, w.t()))
    conv = best_ms(lambda: torch.nn.functional.conv2d(image, w.view(4 * C, C, 1, 1), b))
    print(f"(B, H, W, C) = {(B, H, W, C)}: mm {mm:.2f} ms, addmm {addmm:.2f} ms, 1x1 conv {conv:.2f} ms")
