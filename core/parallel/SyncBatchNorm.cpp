// One autograd function, as torch.nn.SyncBatchNorm: forward all-reduces the per-channel sum,
// then the centred sum of squares (two passes, for float32 accuracy); backward all-reduces
// sum(dy) and sum(dy * (x - mean)) in one call. It keeps only x and the (C) statistics.
#include "parallel/SyncBatchNorm.h"

#include <ATen/ATen.h>
#include <torch/torch.h>

#include "parallel/Communicator.h"
#include "util/Error.h"

namespace halo::parallel {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct NormCapsule : torch::CustomClassHolder {
  NormCapsule(std::shared_ptr<Communicator> g, double n, double e) : group(std::move(g)), count(n), eps(e) {}
  std::shared_ptr<Communicator> group;
  double count;  // B * H * W over the whole map
  double eps;
  at::Tensor mean, var;  // (C), for the running statistics
};

at::Tensor per_channel(const at::Tensor& v) { return v.view({1, v.size(0), 1, 1}); }

at::Tensor summed(at::Tensor local, Communicator& group) {
  group.all_reduce_sum(local);
  return local;
}

class SyncBatchNormFunction : public torch::autograd::Function<SyncBatchNormFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                            c10::intrusive_ptr<NormCapsule> cap) {
    const at::Tensor mean = summed(x.sum({0, 2, 3}), *cap->group) / cap->count;                                 // (C)
    const at::Tensor var = summed((x - per_channel(mean)).square_().sum({0, 2, 3}), *cap->group) / cap->count;  // (C)
    const at::Tensor invstd = at::rsqrt(var + cap->eps);
    const at::Tensor scale = weight * invstd;  // y = x * scale + (bias - mean * scale)
    // One temporary of x's size at a time: the centred copy, then the output itself.
    at::Tensor y = (x * per_channel(scale)).add_(per_channel(bias - mean * scale));
    cap->mean = mean;
    cap->var = var;
    ctx->save_for_backward({x, weight, mean, invstd});
    ctx->saved_data["cap"] = c10::IValue::make_capsule(cap);
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1], &mean = saved[2], &invstd = saved[3];
    auto* cap = static_cast<NormCapsule*>(ctx->saved_data["cap"].toCapsule().get());
    const at::Tensor& dy = grads[0];
    at::Tensor xmu = x - per_channel(mean);
    // This rank's sums (its weight and bias gradients: partial, summed over sp by GradSync),
    // then the group's, for the input gradient.
    const at::Tensor local = at::stack({dy.sum({0, 2, 3}), (dy * xmu).sum({0, 2, 3})});  // (2, C)
    const at::Tensor total = summed(local.clone(), *cap->group) / cap->count;
    const at::Tensor mean_dy = total[0], mean_dy_xmu = total[1];
    // dx = (dy - mean_dy - xmu * invstd^2 * mean_dy_xmu) * invstd * weight, in place where it
    // can be: besides dx, at most one temporary of x's size is live.
    xmu.mul_(per_channel(invstd * invstd * mean_dy_xmu));
    at::Tensor dx = (dy - per_channel(mean_dy)).sub_(xmu).mul_(per_channel(invstd * weight));
    return {dx, local[1] * invstd, local[0], at::Tensor()};
  }
};

}  // namespace

ShardedTensor sync_batch_norm(const ShardedTensor& x, BatchNormState& bn, bool training) {
  const at::Tensor& t = x.local;  // (B, C, H, W/world)
  const int64_t C = t.size(1);
  if (!training)  // the running statistics: per pixel, nothing to sync
    return x.with(at::batch_norm(t, bn.weight, bn.bias, bn.running_mean, bn.running_var, false, 0.0, bn.eps, false));
  const double n = static_cast<double>(t.size(0) * t.size(2) * x.global_width());
  const at::Tensor weight = bn.weight.defined() ? bn.weight : at::ones({C}, t.options());
  const at::Tensor bias = bn.bias.defined() ? bn.bias : at::zeros({C}, t.options());
  auto cap = c10::make_intrusive<NormCapsule>(x.group, n, bn.eps);
  at::Tensor y = SyncBatchNormFunction::apply(t, weight, bias, cap);
  if (bn.running_mean.defined()) {
    at::NoGradGuard no_grad;
    bn.running_mean.mul_(1 - bn.momentum).add_(cap->mean, bn.momentum);
    bn.running_var.mul_(1 - bn.momentum).add_(cap->var * (n / std::max(n - 1, 1.0)), bn.momentum);
  }
  return x.with(y);
}

}  // namespace halo::parallel
