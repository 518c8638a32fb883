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

// The rules both Optimizer and ShardedOptimizer apply, to a whole parameter or to a ZeRO chunk
// (decay is the caller's: per parameter, or per parameter piece of a chunk).
struct BiasCorrection {
  double bc1 = 1, bc2 = 1;  // 1 - beta^step
};
BiasCorrection bias_correction(const OptimizerOptions& o, int64_t steps);
std::vector<std::string> slot_names(config::OptimizerKind kind);  // "exp_avg", "exp_avg_sq" | "momentum_buffer"
void adam_moments(const at::Tensor& m, const at::Tensor& v, const at::Tensor& g, const OptimizerOptions& o);
// torch.optim.AdamW's order (foreach=False): one temporary, the bias corrections folded into
// the scalars: p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps).
void adamw_step(const at::Tensor& p, const at::Tensor& m, const at::Tensor& v, double lr, BiasCorrection bc,
                const OptimizerOptions& o);
// LAMB's update before decay and trust ratio: (m / bc1) / (sqrt(v / bc2) + eps).
at::Tensor lamb_update(const at::Tensor& m, const at::Tensor& v, BiasCorrection bc, const OptimizerOptions& o);
// SGD with momentum on the (decayed) gradient d.
void sgd_step(const at::Tensor& p, const at::Tensor& buf, const at::Tensor& d, double lr, const OptimizerOptions& o);

class Optimizer {
 public:
  using Params = std::vector<std::pair<std::string, at::Tensor>>;
  Optimizer(Params params, OptimizerOptions opts);

  void step(double lr);  // uses each parameter's .grad(); no-op for parameters without one
  void zero_grad();      // lets every gradient go: backward makes them anew, none is held between steps
  int64_t steps() const { return steps_; }

  // State as "<param>.<slot>" tensors plus "__step__", for checkpoints.
  std::vector<std::pair<std::string, at::Tensor>> state() const;
  void load_state(const std::map<std::string, at::Tensor>& state);  // util::Error on a missing/misshaped entry

 private:
  Params params_;
  OptimizerOptions opts_;
  int64_t steps_ = 0;
  std::map<std::string, at::Tensor> slot_;  // "<param>.exp_avg" | ".exp_avg_sq" | ".momentum_buffer"

  void fused_adamw_step(double lr);
};

}  // namespace halo::train
