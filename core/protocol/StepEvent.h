// `step`: one optimizer step of one rank, every train.log_every steps (read by the launcher's
// progress and LaunchResult, the history's metrics and samples, `halo bench memory`, the workbench).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

struct StepTimes {  // milliseconds of the step, by phase
  double forward = 0, backward = 0, comm = 0, optim = 0, total = 0;
  bool operator==(const StepTimes&) const = default;
};

struct StepMemory {        // bytes
  int64_t current = 0;     // live tensors at the step's end (CPU: counted; CUDA: allocated)
  int64_t peak = 0;        // highest during the step
  int64_t reserved = 0;    // CUDA: held by the caching allocator; CPU: RSS
  int64_t rss = 0;         // resident set size of the process
  int64_t step_start = 0;  // live bytes when the step began (weights, optimizer state)
  bool operator==(const StepMemory&) const = default;
};

struct StepEvent {
  static constexpr const char* name = names::step;
  int rank = 0;
  int64_t step = 0;                      // 0-based step just taken (required)
  std::map<std::string, double> losses;  // "loss" and the task's terms; NaN when non-finite (written as null)
  double lr = 0, grad_norm = 0, loss_scale = 1;
  bool skipped = false;  // non-finite gradients: no update
  StepTimes time_ms;
  StepMemory memory;
  double samples_per_s = 0;  // global samples per second

  double loss() const;  // losses["loss"]; 0 when absent
  // The step's named scalars as the history stores them: each loss key, lr, grad_norm,
  // loss_scale, then time_ms.<phase>.
  std::vector<std::pair<std::string, double>> metrics() const;
  bool operator==(const StepEvent&) const = default;
};

void to_json(nlohmann::json& j, const StepEvent& e);
void from_json(const nlohmann::json& j, StepEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
