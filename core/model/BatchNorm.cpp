// One rank: LibTorch's fused batch norm (what plain LibTorch costs); several: the synced
// statistics. Either way the module's buffers are the ones updated.
#include "model/BatchNorm.h"

#include <torch/torch.h>

#include "model/Checkpoint.h"
#include "parallel/Communicator.h"
#include "parallel/SyncBatchNorm.h"

namespace halo::model {

parallel::ShardedTensor batch_norm(torch::nn::BatchNorm2dImpl& bn, const parallel::ShardedTensor& x) {
  const bool training = bn.is_training();
  const bool update = training && !recomputing();
  const double momentum = bn.options.momentum().value_or(0.1), eps = bn.options.eps();
  if (update) {
    torch::NoGradGuard no_grad;
    bn.num_batches_tracked.add_(1);
  }
  // A recomputation normalises with batch statistics but leaves the running ones alone.
  const bool stats = update || !training;
  const at::Tensor mean = stats ? bn.running_mean : at::Tensor(), var = stats ? bn.running_var : at::Tensor();
  if (x.group->size() == 1 || !training)  // evaluation normalises each pixel on its own: nothing to sync
    return x.with(at::batch_norm(x.local, bn.weight, bn.bias, mean, var, training, momentum, eps, false));
  parallel::BatchNormState state{bn.weight, bn.bias, mean, var, momentum, eps};
  return parallel::sync_batch_norm(x, state, training);
}

}  // namespace halo::model
