// Measured rates: the same matmul and copy loops for a fixed wall time each, with
// `threads` intra-op threads (restored afterwards).
#include "launch/CpuRates.h"

#include <chrono>

#include <fmt/format.h>
#include <torch/torch.h>

namespace halo::launch {

memory::MachineRates measure_cpu_rates(int threads) {
  const int before = at::get_num_threads();
  at::set_num_threads(threads);
  using clk = std::chrono::steady_clock;
  auto seconds = [](clk::time_point a, clk::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  torch::NoGradGuard no_grad;
  const int64_t n = 512;
  at::Tensor a = torch::randn({n, n}), b = torch::randn({n, n});
  at::Tensor c = at::mm(a, b);  // warm-up
  int reps = 0;
  auto t0 = clk::now();
  while (seconds(t0, clk::now()) < 0.4) {
    c = at::mm(a, b);
    ++reps;
  }
  const double mm_rate = 2.0 * n * n * n * reps / seconds(t0, clk::now());
  at::Tensor big = torch::randn({16 << 20}), dst = torch::empty_like(big);  // 64 MiB
  dst.copy_(big);
  reps = 0;
  t0 = clk::now();
  while (seconds(t0, clk::now()) < 0.3) {
    dst.copy_(big);
    ++reps;
  }
  const double bw = 2.0 * static_cast<double>(big.nbytes()) * reps / seconds(t0, clk::now());
  at::set_num_threads(before);
  memory::MachineRates r = memory::stored_rates(memory::DeviceKind::Cpu);
  r.flops_per_s = mm_rate;
  r.bytes_per_s = bw;
  r.source =
      fmt::format("measured: {:.1f} GFLOP/s matmul, {:.1f} GB/s copy, {} thread(s)", mm_rate / 1e9, bw / 1e9, threads);
  return r;
}

}  // namespace halo::launch
