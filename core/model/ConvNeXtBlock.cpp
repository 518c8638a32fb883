// The block's per-pixel part (norm, MLP, layer scale, residual) is local to the stripe;
// only conv_dw exchanges halos.
#include "model/ConvNeXtBlock.h"

#include <torch/torch.h>

#include "arch/ConvNeXtLayers.h"
#include "model/BlockPointwise.h"
#include "model/Checkpoint.h"
#include "model/Init.h"

namespace halo::model {

namespace {
// Registers "<prefix>.weight" / "<prefix>.bias" under a child module named prefix.
struct Holder : torch::nn::Module {};
}  // namespace

MlpImpl::MlpImpl(int64_t channels, int64_t hidden, bool conv) : conv_(conv) {
  auto make = [&](const char* name, int64_t out, int64_t in, torch::Tensor& w, torch::Tensor& b) {
    auto child = register_module(name, std::make_shared<Holder>());
    w = child->register_parameter("weight", conv ? torch::empty({out, in, 1, 1}) : torch::empty({out, in}));
    b = child->register_parameter("bias", torch::zeros({out}));
    trunc_normal_(w, 0.02);
  };
  make("fc1", hidden, channels, fc1_weight, fc1_bias);
  make("fc2", channels, hidden, fc2_weight, fc2_bias);
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  if (conv_) return at::conv2d(at::gelu(at::conv2d(x, fc1_weight, fc1_bias)), fc2_weight, fc2_bias);
  return at::linear(at::gelu(at::linear(x, fc1_weight, fc1_bias)), fc2_weight, fc2_bias);
}

torch::Tensor MlpImpl::forward_last(const torch::Tensor& x) {
  const auto w1 = fc1_weight.flatten(1), w2 = fc2_weight.flatten(1);  // (hidden, C), (C, hidden)
  return at::linear(at::gelu(at::linear(x, w1, fc1_bias)), w2, fc2_bias);
}

ConvNeXtBlockImpl::ConvNeXtBlockImpl(const arch::Layer& layer, double ls_init, double drop_path)
    : conv_mlp_(!layer.conv("mlp.fc1").linear), drop_path_(drop_path) {
  const arch::Conv& dw = layer.conv("conv_dw");
  const arch::Norm& n = layer.norm("norm");
  const arch::Conv& fc1 = layer.conv("mlp.fc1");
  conv_dw = register_module("conv_dw", ShardedConv2d(dw.in_channels, dw.out_channels, dw.spec, dw.bias));
  norm = register_module("norm", LayerNorm2d(n.channels, n.eps));
  mlp = register_module("mlp", Mlp(fc1.in_channels, fc1.out_channels, conv_mlp_));
  gamma = register_parameter("gamma", torch::full({layer.out_channels}, ls_init));
}

ConvNeXtBlockImpl::ConvNeXtBlockImpl(int64_t dim, bool conv_mlp, double norm_eps, double ls_init, double drop_path)
    : ConvNeXtBlockImpl(arch::convnext_block(0, 0, dim, conv_mlp, norm_eps), ls_init, drop_path) {}

parallel::ShardedTensor ConvNeXtBlockImpl::forward(const parallel::ShardedTensor& x) {
  return x.with(branch(x).local + x.local);
}

parallel::ShardedTensor ConvNeXtBlockImpl::branch(const parallel::ShardedTensor& x) {
  torch::Tensor y = conv_dw->forward(x).local;  // (B, C, H, W/world)
  // Per pixel in (B, H, W/world, C), for either MLP style (1x1 convs run as Linear: faster on CPU).
  if (recompute_cheap_ && is_training()) {
    y = block_pointwise(y.permute({0, 2, 3, 1}),
                        {norm->weight, norm->bias, mlp->fc1_weight, mlp->fc1_bias, mlp->fc2_weight, mlp->fc2_bias,
                         gamma, norm->eps(), pointwise_kernel_},
                        recompute_output_unread())
            .permute({0, 3, 1, 2});
  } else {
    y = mlp->forward_last(norm->forward_last(y.permute({0, 2, 3, 1}))).permute({0, 3, 1, 2});
    y = y * gamma.view({1, -1, 1, 1});
  }
  if (is_training() && drop_path_ > 0) {
    // One draw per sample from the default generator: every sp rank of a group is seeded
    // alike and issues the same draws, so all stripes of a sample keep or drop together.
    const double keep = 1.0 - drop_path_;
    torch::Tensor mask = torch::empty({y.size(0), 1, 1, 1}, y.options()).bernoulli_(keep);
    y = y * mask / keep;
  }
  return x.with(y);
}

}  // namespace halo::model
