// AdamW, SGD with momentum and LAMB over named parameters, with state kept as named
// tensors so checkpoints hold it as plain tensors. Decay skips 1-D params (norms, biases).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "config/Enums.h"

namespace halo::train {

struct OptimizerOptions {
  config::OptimizerKind kind = config::OptimizerKind::AdamW;
  double weight_decay = 0.05;
  double momentum = 0.9;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

class Optimizer {
 public:
  using Params = std::vector<std::pair<std::string, at::Tensor>>;
  Optimizer(Params params, OptimizerOptions opts);

  void step(double lr);  // uses each parameter's .grad(); no-op for parameters without one
  void zero_grad();
  int64_t steps() const { return steps_; }

  // State as "<param>.<slot>" tensors plus "__step__", for checkpoints.
  std::vector<std::pair<std::string, at::Tensor>> state() const;
  void load_state(const std::map<std::string, at::Tensor>& state);  // util::Error on a missing/misshaped entry

 private:
  Params params_;
  OptimizerOptions opts_;
  int64_t steps_ = 0;
  std::map<std::string, at::Tensor> slot_;  // "<param>.exp_avg" | ".exp_avg_sq" | ".momentum_buffer"
};

}  // namespace halo::train
