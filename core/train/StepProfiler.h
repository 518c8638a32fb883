// Where one training step's time goes, per LibTorch op: self time (its own, children
// excluded), total time and calls, from LibTorch's Kineto profiler on the CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace halo::train {

struct OpTime {
  std::string name;  // "aten::mm", "DepthwiseConvFunction", ...
  double self_ms = 0, total_ms = 0;
  int64_t calls = 0;
};

struct StepProfile {
  double step_ms = 0;       // the step's wall time as the trainer measured it
  double ops_self_ms = 0;   // every op's self time summed (the rest: waits, unprofiled code)
  std::vector<OpTime> ops;  // by self time, largest first
};

void to_json(nlohmann::json& j, const StepProfile& p);
void from_json(const nlohmann::json& j, StepProfile& p);

// start() turns the profiler on for this process; stop() turns it off and sums its events.
// One at a time per process.
class StepProfiler {
 public:
  StepProfiler();
  ~StepProfiler();
  void start();
  StepProfile stop(double step_ms);

 private:
  bool running_ = false;
  uint64_t thread_ = 0;  // the profiler's id of the thread that called start()
};

}  // namespace halo::train
