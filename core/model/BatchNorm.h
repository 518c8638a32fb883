// BatchNorm2d on width-sharded stripes: the module is torch.nn.BatchNorm2d (weight, bias,
// running_mean, running_var, num_batches_tracked, as timm names them); statistics span the sp group.
#pragma once

#include <torch/nn/modules/batchnorm.h>

#include "parallel/ShardedTensor.h"

namespace halo::model {

// Training: batch statistics over (B, H, W) of the whole map (parallel::sync_batch_norm;
// the fused at::batch_norm when the group is one rank), running statistics updated once per
// forward (not again when a checkpointed segment recomputes). Evaluation: running statistics.
parallel::ShardedTensor batch_norm(torch::nn::BatchNorm2dImpl& bn, const parallel::ShardedTensor& x);

}  // namespace halo::model
