// One ResNet block as timm names it: conv1/bn1, conv2/bn2 (BasicBlock), conv3/bn3
// (Bottleneck), the downsample shortcut (0: 1x1 conv, 1: BatchNorm) where the shape changes.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include "arch/Layer.h"
#include "model/ShardedConv2d.h"
#include "parallel/ShardedTensor.h"

namespace halo::model {

class ResNetBlockImpl : public torch::nn::Module {
 public:
  // layer: a BasicBlock or Bottleneck row of the layer list.
  explicit ResNetBlockImpl(const arch::Layer& layer);
  parallel::ShardedTensor forward(const parallel::ShardedTensor& x);  // (B, C, H, W/world)

  ShardedConv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};  // conv3: bottleneck only
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::ModuleList downsample{nullptr};  // null when the shortcut is the identity
};
TORCH_MODULE(ResNetBlock);

// A conv of a layer row as a module, initialised as timm's ResNet does (kaiming normal, fan_out).
ShardedConv2d resnet_conv(const arch::Conv& c);
// A BatchNorm2d of a layer row (weight 1, bias 0; `zero`: weight 0, timm's zero_init_last).
torch::nn::BatchNorm2d resnet_bn(const arch::Norm& n, bool zero = false);

}  // namespace halo::model
