// Backward costs about twice the forward (input and weight gradients); a checkpointed layer
// runs its forward again. Communication is counted without overlap: an upper bound.
#include "memory/StepTime.h"

#include <chrono>

#include <fmt/format.h>
#include <torch/torch.h>

namespace halo::memory {

MachineRates stored_rates(DeviceKind device) {
  if (device == DeviceKind::Cuda)
    return {60e12, 1.5e12, 100e9, 30e-6, "stored: nominal 80 GiB GPU (60 TFLOP/s TF32, 1.5 TB/s, NVLink 100 GB/s)"};
  return {40e9, 4e9, 1e9, 2e-3, "stored: this project's 2-core CPU, one thread per rank, Gloo over loopback"};
}

MachineRates measure_cpu_rates(int threads) {
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
  MachineRates r = stored_rates(DeviceKind::Cpu);
  r.flops_per_s = mm_rate;
  r.bytes_per_s = bw;
  r.source =
      fmt::format("measured: {:.1f} GFLOP/s matmul, {:.1f} GB/s copy, {} thread(s)", mm_rate / 1e9, bw / 1e9, threads);
  return r;
}

StepTimeEstimate estimate_step_time(const std::vector<LayerMemory>& layers, const std::vector<Segment>& segments,
                                    int64_t parameter_bytes, int sp, int dp, const MachineRates& rates) {
  StepTimeEstimate t;
  std::vector<bool> recomputed(layers.size(), false);
  for (const auto& s : segments)
    for (size_t i = s.first; i <= s.last; ++i) recomputed[i] = true;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerMemory& l = layers[i];
    const double fwd = l.flops / rates.flops_per_s + l.bytes_moved / rates.bytes_per_s;
    t.compute_s += 3 * fwd;
    t.flops += 3 * l.flops;
    const double exchange =
        l.halo_bytes > 0 ? rates.link_latency_s + static_cast<double>(l.halo_bytes) / rates.link_bytes_per_s : 0;
    t.halo_s += 2 * exchange;  // gather in forward, return in backward
    if (recomputed[i]) {
      t.recompute_s += fwd;
      t.flops += l.flops;
      t.halo_s += exchange;
    }
  }
  const int world = sp * dp;
  if (world > 1) {
    const double buckets = static_cast<double>(parameter_bytes) / (25 << 20) + 1;
    t.allreduce_s = buckets * rates.link_latency_s +
                    2.0 * (world - 1) / world * static_cast<double>(parameter_bytes) / rates.link_bytes_per_s;
  }
  t.total_s = t.compute_s + t.recompute_s + t.halo_s + t.allreduce_s;
  return t;
}

}  // namespace halo::memory
