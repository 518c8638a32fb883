// Channel LayerNorm via at::layer_norm on a channels-last view.
// Local per pixel: no communication under width sharding.
#include "model/LayerNorm2d.h"

#include <torch/torch.h>

namespace halo::model {

LayerNorm2dImpl::LayerNorm2dImpl(int64_t channels, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({channels}));
  bias = register_parameter("bias", torch::zeros({channels}));
}

torch::Tensor LayerNorm2dImpl::forward(const torch::Tensor& x) {
  return forward_last(x.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
}

torch::Tensor LayerNorm2dImpl::forward_last(const torch::Tensor& x) {
  return at::layer_norm(x, {weight.size(0)}, weight, bias, eps_);
}

}  // namespace halo::model
