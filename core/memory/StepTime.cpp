// Backward costs about twice the forward (input and weight gradients); a checkpointed layer
// runs its forward again. Communication is counted without overlap: an upper bound.
#include "memory/StepTime.h"

#include <fmt/format.h>

namespace halo::memory {

MachineRates stored_rates(DeviceKind device) {
  if (device == DeviceKind::Cuda)
    return {60e12, 1.5e12, 100e9, 30e-6, "stored: nominal 80 GiB GPU (60 TFLOP/s TF32, 1.5 TB/s, NVLink 100 GB/s)"};
  return {40e9, 4e9, 1e9, 2e-3, "stored: this project's 2-core CPU, one thread per rank, Gloo over loopback"};
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
