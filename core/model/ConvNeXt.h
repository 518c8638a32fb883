// ConvNeXt (timm's structure and parameter names) on width-sharded activations: stem,
// four stages, NormMlp head. The head runs on replicated pooled features.
#pragma once

#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include "arch/ConvNeXtLayers.h"
#include "arch/ConvNeXtVariant.h"
#include "arch/LayerShapes.h"
#include "model/Backbone.h"
#include "model/Checkpoint.h"
#include "model/ConvNeXtBlock.h"
#include "model/LayerNorm2d.h"
#include "model/ShardedConv2d.h"
#include "parallel/GradSync.h"
#include "parallel/ShardedTensor.h"
#include "shard/ShardingCheck.h"

namespace halo::model {

class ConvNeXtHeadImpl : public torch::nn::Module {
 public:
  ConvNeXtHeadImpl(int64_t dim, int64_t num_classes, double norm_eps);
  torch::Tensor forward(const torch::Tensor& pooled);  // (B, C) replicated -> (B, classes)

  LayerNorm2d norm{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ConvNeXtHead);

class ConvNeXtImpl : public BackboneImpl {
 public:
  // num_classes 0: no classification head (a backbone for a detector).
  ConvNeXtImpl(const arch::ConvNeXtVariant& variant, int64_t num_classes = 1000, int64_t in_chans = 3,
               double drop_path_rate = 0.0);

  // x: (B, 3, H, W/world) stripes; returns logits (B, classes), identical on every sp rank.
  torch::Tensor forward(const parallel::ShardedTensor& x) override;
  // Every stage's output: strides 4, 8, 16, 32 (for an FPN). forward_features: the last.
  std::vector<parallel::ShardedTensor> forward_stages(const parallel::ShardedTensor& x) override;
  std::string head_prefix() const override { return "head."; }
  const arch::ConvNeXtVariant& variant() const { return variant_; }
  void set_checkpoint(CheckpointLevel level) override;

  torch::nn::ModuleList stem{nullptr};    // 0: patchify conv, 1: LayerNorm2d
  torch::nn::ModuleList stages{nullptr};  // ConvNeXtStage x 4
  ConvNeXtHead head{nullptr};             // null when built with num_classes 0

 private:
  arch::ConvNeXtVariant variant_;
};
TORCH_MODULE(ConvNeXt);

// A stage: optional downsample (0: LayerNorm2d, 1: strided conv) then its blocks.
class ConvNeXtStageImpl : public torch::nn::Module {
 public:
  // layers: the stage's rows of the layer list (downsample first when it has one).
  explicit ConvNeXtStageImpl(const std::vector<arch::Layer>& layers, std::vector<double> drop_path = {});
  // The rows of arch::convnext_stage (stage 1 when it downsamples, else 0).
  ConvNeXtStageImpl(int64_t in_dim, int64_t out_dim, int depth, bool downsample, bool conv_mlp, double norm_eps,
                    std::vector<double> drop_path = {});
  parallel::ShardedTensor forward(parallel::ShardedTensor x);
  CheckpointLevel checkpoint = CheckpointLevel::None;

 private:
  parallel::ShardedTensor forward_inner(parallel::ShardedTensor x);
  std::vector<std::string> names_;  // the layer list's names of its rows, in order

 public:
  torch::nn::ModuleList downsample{nullptr};  // empty for stage 0
  torch::nn::ModuleList blocks{nullptr};
};
TORCH_MODULE(ConvNeXtStage);

}  // namespace halo::model
