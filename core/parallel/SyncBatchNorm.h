// BatchNorm on width-sharded activations: batch statistics are summed over the sp group,
// so every rank normalises with the statistics of the whole (B, C, H, W) map.
#pragma once

#include <ATen/core/Tensor.h>

#include "parallel/ShardedTensor.h"

namespace halo::parallel {

struct BatchNormState {
  at::Tensor weight, bias;               // (C) or undefined
  at::Tensor running_mean, running_var;  // (C) buffers, updated in training
  double momentum = 0.1;
  double eps = 1e-5;
};

ShardedTensor sync_batch_norm(const ShardedTensor& x, BatchNormState& bn, bool training);

}  // namespace halo::parallel
