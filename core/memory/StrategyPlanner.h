// `halo plan`: every setup of an experiment on 1..N devices (sp x dp, checkpoint off, per
// block or per stage, state sharding off or ZeRO 1/2) with its predicted peak per rank and
// step time; the fastest that fits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memory/MemoryPlanner.h"

namespace halo::memory {

struct PlanRow {
  int devices = 1, sp = 1, dp = 1;
  config::Strategy strategy = config::Strategy::None;
  std::optional<config::CheckpointLevel> checkpoint;          // none: no checkpointing
  config::ShardState shard_state = config::ShardState::None;  // ZeRO stage (listed on 2+ devices)
  std::string label;                                          // "tp4+checkpoint(block)+zero2"
  int64_t peak = 0;                                           // worst rank, bytes
  int64_t reserved = 0;                                       // CUDA: with the caching allocator's slack
  int64_t activation_peak = 0;
  double step_s = 0;             // estimated
  double time_per_sample_s = 0;  // step_s / (dp * batch)
  double relative_time = 0;      // time per sample / that of `none` on one device
  bool fits = false;
  std::string problem;  // why this setup cannot run (width does not shard, ...)
  // The experiment set up as this row (its parallel settings over cfg's): what "launch this
  // row" runs, and what the row was predicted from.
  config::ExperimentConfig applied_to(const config::ExperimentConfig& cfg) const;
};

struct PlanResult {
  std::vector<PlanRow> rows;
  std::optional<size_t> recommended;        // the fastest row that fits
  std::vector<size_t> fastest_per_devices;  // per device count with a fitting row: its fastest
  int64_t budget = 0;                       // bytes per rank
  MachineRates rates;
};

// Rows for every device count, in order; `budget` bytes per rank (compared with `reserved`).
PlanResult plan_setups(const config::ExperimentConfig& cfg, const std::vector<int>& device_counts, int64_t budget,
                       const MachineRates& rates);

// "24GiB", "80 GB", "512MiB", "1e9" -> bytes; util::Error otherwise.
int64_t parse_bytes(const std::string& text);

}  // namespace halo::memory
