// LayerNorm over the channels of a (B, C, H, W) map (timm's LayerNorm2d): per pixel, so
// it runs unchanged on a width stripe. Parameters "weight" and "bias" (C).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace halo::model {

class LayerNorm2dImpl : public torch::nn::Module {
 public:
  explicit LayerNorm2dImpl(int64_t channels, double eps = 1e-6);
  torch::Tensor forward(const torch::Tensor& x);       // (B, C, H, W) -> same
  torch::Tensor forward_last(const torch::Tensor& x);  // (..., C) channels-last

  double eps() const { return eps_; }

  torch::Tensor weight, bias;

 private:
  double eps_;
};
TORCH_MODULE(LayerNorm2d);

}  // namespace halo::model
