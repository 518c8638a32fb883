// One RegNetY block as timm names it: conv1, conv2 (ConvNormAct: .conv, .bn), se (fc1, fc2),
// conv3, the downsample shortcut (.conv, .bn) where the shape changes; and the modules it is made of.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include "arch/Layer.h"
#include "model/ShardedConv2d.h"
#include "parallel/ShardedTensor.h"

namespace halo::model {

// timm's ConvNormAct: a sharded conv (no bias), BatchNorm, optional ReLU.
class ConvBnImpl : public torch::nn::Module {
 public:
  ConvBnImpl(const arch::Conv& conv, const arch::Norm& norm, bool relu, bool zero_bn = false);
  parallel::ShardedTensor forward(const parallel::ShardedTensor& x);

  ShardedConv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};

 private:
  bool relu_;
};
TORCH_MODULE(ConvBn);

// Squeeze-excitation on stripes: the mean over the whole map (summed over the sp group),
// fc1, ReLU, fc2, sigmoid, then each rank scales its own stripe.
class SqueezeExciteImpl : public torch::nn::Module {
 public:
  SqueezeExciteImpl(const arch::Conv& fc1, const arch::Conv& fc2);
  parallel::ShardedTensor forward(const parallel::ShardedTensor& x);

  torch::nn::Conv2d fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(SqueezeExcite);

class RegNetBlockImpl : public torch::nn::Module {
 public:
  // layer: a RegNetBlock row of the layer list.
  explicit RegNetBlockImpl(const arch::Layer& layer);
  parallel::ShardedTensor forward(const parallel::ShardedTensor& x);  // (B, C, H, W/world)

  ConvBn conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  SqueezeExcite se{nullptr};
  ConvBn downsample{nullptr};  // null when the shortcut is the identity
};
TORCH_MODULE(RegNetBlock);

}  // namespace halo::model
