// Where one training step's time goes, per LibTorch op: self time (its own, children
// excluded), total time and calls, from LibTorch's Kineto profiler; on CUDA also per kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace halo::train {

struct OpTime {
  std::string name;  // "aten::mm", "DepthwiseConvFunction", ...; a GPU kernel's own name
  double self_ms = 0, total_ms = 0;
  int64_t calls = 0;
  bool gpu = false;  // a kernel, copy or memset on the GPU (its time is the device's)
};

struct StepProfile {
  double step_ms = 0;       // the step's wall time as the trainer measured it
  double ops_self_ms = 0;   // every CPU op's self time summed (the rest: waits, unprofiled code)
  double gpu_ms = 0;        // every GPU kernel's time summed (0 on the CPU)
  std::vector<OpTime> ops;  // by self time, largest first
};

void to_json(nlohmann::json& j, const StepProfile& p);
void from_json(const nlohmann::json& j, StepProfile& p);

// start() turns the profiler on for this process (cuda: the GPU's kernels too); stop() turns
// it off and sums its events. One at a time per process.
class StepProfiler {
 public:
  StepProfiler();
  ~StepProfiler();
  void start(bool cuda = false);
  StepProfile stop(double step_ms);

 private:
  bool running_ = false;
  uint64_t thread_ = 0;  // the profiler's id of the thread that called start()
};

}  // namespace halo::train
