// AdamW, SGD with momentum and LAMB over this rank's chunks of ZeRO's flat buckets: the same
// rules as Optimizer (its update functions), element for element, with 1/world of the state on each rank.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "parallel/ShardedState.h"
#include "train/Optimizer.h"

namespace halo::train {

class ShardedOptimizer {
 public:
  ShardedOptimizer(std::shared_ptr<parallel::ShardedState> state, OptimizerOptions opts,
                   std::shared_ptr<parallel::Mesh> mesh);

  // grads: this rank's gradient chunk of each bucket (summed over the world, unscaled,
  // clipped). Updates this rank's chunks of the parameters; the caller all-gathers them.
  void step(double lr, const std::vector<at::Tensor>& grads);
  int64_t steps() const { return steps_; }

  // Whole tensors as Optimizer::state() names them ("<param>.exp_avg", "__step__"), so a
  // checkpoint resumes under any layout: a collective (every rank calls it).
  std::vector<std::pair<std::string, at::Tensor>> state() const;
  // From whole tensors (Optimizer::state()'s names): util::Error on a missing or misshaped one.
  void load_state(const std::map<std::string, at::Tensor>& state);

 private:
  // LAMB's trust ratio ||p|| / ||update|| of every parameter, from this rank's pieces of
  // both, summed over the world.
  std::vector<double> trust_ratios(const std::vector<at::Tensor>& updates) const;

  std::shared_ptr<parallel::ShardedState> state_;
  OptimizerOptions opts_;
  std::shared_ptr<parallel::Mesh> mesh_;
  int64_t steps_ = 0;
  std::vector<std::map<std::string, at::Tensor>> slots_;  // per bucket: slot name -> chunk
};

}  // namespace halo::train
