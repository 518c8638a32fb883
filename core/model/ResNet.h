// ResNet (timm's structure and parameter names: conv1, bn1, layer1..layer4, fc) on
// width-sharded activations; BatchNorm statistics over the sp group, the head replicated.
#pragma once

#include <string>
#include <vector>

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "arch/ResNetVariant.h"
#include "model/Backbone.h"
#include "model/ResNetBlock.h"
#include "model/ShardedConv2d.h"

namespace halo::model {

class ResNetImpl : public BackboneImpl {
 public:
  // num_classes 0: no fc (a backbone for a detector).
  explicit ResNetImpl(const arch::ResNetVariant& variant, int64_t num_classes = 1000, int64_t in_chans = 3);

  torch::Tensor forward(const parallel::ShardedTensor& x) override;  // (B, classes), replicated
  // layer1..layer4's outputs: strides 4, 8, 16, 32.
  std::vector<parallel::ShardedTensor> forward_stages(const parallel::ShardedTensor& x) override;
  std::string head_prefix() const override { return "fc."; }
  void set_checkpoint(CheckpointLevel level) override { checkpoint_ = level; }
  const arch::ResNetVariant& variant() const { return variant_; }

  ShardedConv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  std::vector<torch::nn::ModuleList> stages;  // registered as layer1..layer4
  torch::nn::Linear fc{nullptr};              // null when built with num_classes 0

 private:
  parallel::ShardedTensor stage_forward(size_t stage, parallel::ShardedTensor x);
  arch::ResNetVariant variant_;
  shard::ConvSpec maxpool_;
  std::vector<std::vector<std::string>> names_;  // the layer list's block names, per stage
  CheckpointLevel checkpoint_ = CheckpointLevel::None;
};
TORCH_MODULE(ResNet);

}  // namespace halo::model
