// Channel LayerNorm on a channels-last view: at::layer_norm, or on more than one thread its
// forward with Halo's row-split backward (LayerNormRowsFunction).
// Local per pixel: no communication under width sharding.
#include "model/LayerNorm2d.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "model/LayerNormBackward.h"

namespace halo::model {

namespace {

// at::layer_norm's forward with model::layer_norm_backward as its backward.
class LayerNormRowsFunction : public torch::autograd::Function<LayerNormRowsFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias, double eps) {
    auto [y, mean, rstd] = at::native_layer_norm(x, {weight.size(0)}, weight, bias, eps);
    ctx->save_for_backward({x, weight, bias, mean, rstd});  // what ATen's own backward node keeps
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1], &bias = saved[2], &mean = saved[3], &rstd = saved[4];
    auto [dx, dw, db] = layer_norm_backward(grads[0].contiguous(), x, mean, rstd, weight, bias);
    return {dx, dw, db, at::Tensor()};
  }
};

// Halo's backward where it is faster than ATen's: fp32 CPU rows in memory order on more than one
// thread (ATen's is slower there on two threads than on one at few channels), outside autocast.
bool rows_backward(const at::Tensor& x, const at::Tensor& weight) {
  return at::get_num_threads() > 1 && x.is_cpu() && x.scalar_type() == at::kFloat &&
         weight.scalar_type() == at::kFloat && x.is_contiguous() && at::GradMode::is_enabled() &&
         (x.requires_grad() || weight.requires_grad()) && !at::autocast::is_autocast_enabled(at::kCPU);
}

}  // namespace

LayerNorm2dImpl::LayerNorm2dImpl(int64_t channels, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({channels}));
  bias = register_parameter("bias", torch::zeros({channels}));
}

torch::Tensor LayerNorm2dImpl::forward(const torch::Tensor& x) {
  return forward_last(x.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
}

torch::Tensor LayerNorm2dImpl::forward_last(const torch::Tensor& x) {
  if (rows_backward(x, weight)) return LayerNormRowsFunction::apply(x, weight, bias, eps_);
  return at::layer_norm(x, {weight.size(0)}, weight, bias, eps_);
}

}  // namespace halo::model
