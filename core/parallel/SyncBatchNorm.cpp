// Two-pass statistics (mean, then centred squares) for float32 accuracy; both sums are
// differentiable partial->replicate reductions whose backward sums over the group too.
#include "parallel/SyncBatchNorm.h"

#include <ATen/ATen.h>

#include "parallel/Collectives.h"

namespace halo::parallel {

ShardedTensor sync_batch_norm(const ShardedTensor& x, BatchNormState& bn, bool training) {
  const at::Tensor& t = x.local;  // (B, C, H, W/world)
  const int64_t C = t.size(1);
  auto per_channel = [&](const at::Tensor& v) { return v.view({1, C, 1, 1}); };
  at::Tensor mean, var;
  if (training) {
    const double n = static_cast<double>(t.size(0) * t.size(2) * x.global_width());
    mean = sum_partials(t.sum({0, 2, 3}), x.group) / n;
    at::Tensor centred = t - per_channel(mean);
    var = sum_partials(centred.pow(2).sum({0, 2, 3}), x.group) / n;
    {
      at::NoGradGuard no_grad;
      if (bn.running_mean.defined()) {
        bn.running_mean.mul_(1 - bn.momentum).add_(mean.detach(), bn.momentum);
        bn.running_var.mul_(1 - bn.momentum).add_(var.detach() * (n / std::max(n - 1, 1.0)), bn.momentum);
      }
    }
    at::Tensor y = centred * per_channel(at::rsqrt(var + bn.eps));
    if (bn.weight.defined()) y = y * per_channel(bn.weight) + per_channel(bn.bias);
    return x.with(y);
  }
  at::Tensor y = (t - per_channel(bn.running_mean)) * per_channel(at::rsqrt(bn.running_var + bn.eps));
  if (bn.weight.defined()) y = y * per_channel(bn.weight) + per_channel(bn.bias);
  return x.with(y);
}

}  // namespace halo::parallel
