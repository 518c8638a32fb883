// RegNetY (timm's structure and parameter names: stem, s1..s4 of blocks b1.., head.fc) on
// width-sharded activations; BatchNorm and squeeze-excitation statistics over the sp group.
#pragma once

#include <string>
#include <vector>

#include <torch/nn/modules/container/moduledict.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "arch/RegNetVariant.h"
#include "model/Backbone.h"
#include "model/RegNetBlock.h"

namespace halo::model {

// timm's ClassifierHead: global average pool (on the ranks), then fc on replicated features.
class PoolFcHeadImpl : public torch::nn::Module {
 public:
  PoolFcHeadImpl(int64_t dim, int64_t classes);
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(PoolFcHead);

class RegNetImpl : public BackboneImpl {
 public:
  // num_classes 0: no head (a backbone for a detector).
  explicit RegNetImpl(const arch::RegNetVariant& variant, int64_t num_classes = 1000, int64_t in_chans = 3);

  torch::Tensor forward(const parallel::ShardedTensor& x) override;  // (B, classes), replicated
  // s1..s4's outputs: strides 4, 8, 16, 32.
  std::vector<parallel::ShardedTensor> forward_stages(const parallel::ShardedTensor& x) override;
  std::string head_prefix() const override { return "head."; }
  void set_checkpoint(CheckpointLevel level) override { checkpoint_ = level; }

  ConvBn stem{nullptr};
  std::vector<torch::nn::ModuleDict> stages;  // registered as s1..s4, blocks b1..
  PoolFcHead head{nullptr};                   // null when built with num_classes 0

 private:
  parallel::ShardedTensor stage_forward(size_t stage, parallel::ShardedTensor x);
  std::vector<std::vector<std::string>> names_;  // the layer list's block names, per stage
  CheckpointLevel checkpoint_ = CheckpointLevel::None;
};
TORCH_MODULE(RegNet);

}  // namespace halo::model
