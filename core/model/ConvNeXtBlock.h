// One ConvNeXt block as timm names it: conv_dw (depthwise, width-sharded), norm,
// mlp.fc1 / GELU / mlp.fc2 (Linear or 1x1 conv), gamma (layer scale), residual.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/moduledict.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "arch/Layer.h"
#include "model/LayerNorm2d.h"
#include "model/PointwiseKernel.h"
#include "model/ShardedConv2d.h"
#include "parallel/ShardedTensor.h"

namespace halo::model {

// fc1/fc2 of the block: torch.nn.Linear (channels-last) or a 1x1 Conv2d (conv_mlp).
class MlpImpl : public torch::nn::Module {
 public:
  MlpImpl(int64_t channels, int64_t hidden, bool conv);
  torch::Tensor forward(const torch::Tensor& x);  // conv: (B, C, H, W); else (B, H, W, C)
  // (B, H, W, C) in either style: a 1x1 conv is a Linear over the channels of each pixel, so
  // its weight (out, in, 1, 1) is used as (out, in); the same result, a faster kernel on CPU.
  torch::Tensor forward_last(const torch::Tensor& x);

  torch::Tensor fc1_weight, fc1_bias, fc2_weight, fc2_bias;

 private:
  bool conv_;
};
TORCH_MODULE(Mlp);

class ConvNeXtBlockImpl : public torch::nn::Module {
 public:
  // layer: a ConvNeXtBlock row of the layer list (conv_dw's spec, channels, MLP width and style).
  ConvNeXtBlockImpl(const arch::Layer& layer, double ls_init, double drop_path);
  ConvNeXtBlockImpl(int64_t dim, bool conv_mlp, double norm_eps, double ls_init = 1e-6, double drop_path = 0.0);
  parallel::ShardedTensor forward(const parallel::ShardedTensor& x);  // (B, C, H, W/world): x + branch(x)
  // The residual branch: conv_dw, norm, MLP, layer scale, drop path. Its first op, conv_dw,
  // reads x only through autocast's cast (model::checkpointed_residual relies on it).
  parallel::ShardedTensor branch(const parallel::ShardedTensor& x);
  // Keep only conv_dw's and fc1's outputs for backward (model::block_pointwise): the same
  // values and gradients, about half the saved bytes, LayerNorm and GELU run twice.
  void set_recompute_cheap(bool on) { recompute_cheap_ = on; }
  // The kernels of the recomputing branch's per-pixel products (model::PointwiseKernel).
  void set_pointwise_kernel(PointwiseKernel k) { pointwise_kernel_ = k; }

  ShardedConv2d conv_dw{nullptr};
  LayerNorm2d norm{nullptr};
  Mlp mlp{nullptr};
  torch::Tensor gamma;

 private:
  bool conv_mlp_;
  double drop_path_;  // stochastic depth: drop the residual branch per sample in training
  bool recompute_cheap_ = false;
  PointwiseKernel pointwise_kernel_ = PointwiseKernel::Gemm;
};
TORCH_MODULE(ConvNeXtBlock);

}  // namespace halo::model
