"""Whether two single-threaded processes slow each other down on this machine's cores.

Run it alone, then twice at once (`python core_contention.py & python core_contention.py`):
a 1024^3 matrix product and a 9.2 M-element GELU, one thread each, mean of 40 calls. Where the
"at once" times exceed the "alone" ones, sp=2 cannot reach twice one process's speed.
"""
import time

import torch

torch.set_num_threads(1)


def mean_ms(f, n=40, warmup=3):
    for _ in range(warmup):
        f()
    t = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t) / n * 1e3


a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
x = torch.randn(28 * 64 * 128 * 40)
print(f"mm {mean_ms(lambda: a @ b):.2f} ms  gelu {mean_ms(lambda: torch.nn.functional.gelu(x)):.2f} ms")
