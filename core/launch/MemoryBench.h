// `halo bench memory EXPERIMENT.json --strategies none,checkpoint,tp2,tp4,tp4+checkpoint+zero2`:
// each setup in its own processes; per rank peak activation memory, peak total, step time.
#pragma once

#include <string>
#include <vector>

#include "config/Enums.h"

namespace halo::launch {

struct MemoryBenchOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  std::vector<std::string> strategies{"none", "checkpoint", "tp2", "tp4", "tp4+checkpoint"};
  int steps = 3;  // the first is warm-up, the rest are measured
};

struct MemoryBenchRow {
  std::string strategy;  // the label asked for: "tp4+checkpoint"
  config::Strategy kind = config::Strategy::None;
  int sp = 1;
  config::ShardState shard_state = config::ShardState::None;
  int rank = 0;
  double activation_peak = 0;  // bytes: peak during the step minus live bytes at its start
  double total_peak = 0;       // bytes: peak live tensors during the step
  double rss = 0;              // bytes
  double step_ms = 0;
  double activation_ratio = 0, step_ratio = 0;  // to `none` (rank 0 of each)
  // core/memory's prediction for the same rank, made before the run (bytes), and the
  // relative difference (predicted / measured - 1). predicted false: the planner does not
  // model the backbone (a ResNet, a RegNet), the bench measures only.
  bool predicted = true;
  double predicted_activation = 0, predicted_total = 0;
  double activation_error = 0, total_error = 0;
};

std::vector<MemoryBenchRow> run_memory_bench(const MemoryBenchOptions& o);

// One --strategies entry: a memory strategy, its sp, and the ZeRO stage ("+zero1": optimizer
// state sharded over the ranks, "+zero2": and the gradients, "+zero3": and the blocks' weights).
struct BenchSetup {
  config::Strategy strategy = config::Strategy::None;
  int sp = 1;
  config::ShardState shard_state = config::ShardState::None;
};
// "tp4+checkpoint+zero2" -> {Strategy::TpCheckpoint, sp 4, ShardState::Gradients}; util::Error
// on anything else.
BenchSetup parse_strategy(const std::string& s);

}  // namespace halo::launch
