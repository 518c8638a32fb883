// A step-time estimate from the op count: forward FLOPs and bytes per layer over measured
// (or stored) machine rates, x3 for forward + backward, plus recompute and communication.
#pragma once

#include <string>
#include <vector>

#include "memory/StepSimulator.h"

namespace halo::memory {

struct MachineRates {
  double flops_per_s = 0;       // dense fp32 matmul rate of one rank
  double bytes_per_s = 0;       // memory bandwidth of one rank (elementwise ops)
  double link_bytes_per_s = 0;  // rank-to-rank bandwidth
  double link_latency_s = 0;    // per exchange / per bucket
  std::string source;           // "stored: ..." or "measured: ..."
};

// Stored figures: CPU as measured on the development machine (one thread per rank);
// CUDA nominal for an 80 GiB data-centre GPU with NVLink (not measured by Halo).
MachineRates stored_rates(DeviceKind device);

struct StepTimeEstimate {
  double flops = 0;  // forward + backward + recompute
  double compute_s = 0, recompute_s = 0, halo_s = 0, allreduce_s = 0, total_s = 0;
};

StepTimeEstimate estimate_step_time(const std::vector<LayerMemory>& layers, const std::vector<Segment>& segments,
                                    int64_t parameter_bytes, int sp, int dp, const MachineRates& rates);

}  // namespace halo::memory
