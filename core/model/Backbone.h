// What every width-sharded backbone (ConvNeXt, ResNet) offers the tasks, the trainer, verify
// and export: logits or stage outputs on stripes, its layer list, checkpointing and overlap.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "arch/LayerList.h"
#include "arch/LayerShapes.h"
#include "model/Checkpoint.h"
#include "model/PointwiseKernel.h"
#include "parallel/GradSync.h"
#include "parallel/ShardedTensor.h"

namespace halo::model {

class ConvNeXtBlockImpl;

class BackboneImpl : public torch::nn::Module {
 public:
  explicit BackboneImpl(arch::LayerList layers) : layers_(std::move(layers)) {}

  // x: (B, C, H, W/world) stripes; returns logits (B, classes), identical on every sp rank.
  virtual torch::Tensor forward(const parallel::ShardedTensor& x) = 0;
  // Every stage's output: strides 4, 8, 16, 32 (for an FPN).
  virtual std::vector<parallel::ShardedTensor> forward_stages(const parallel::ShardedTensor& x) = 0;
  parallel::ShardedTensor forward_features(const parallel::ShardedTensor& x) { return forward_stages(x).back(); }
  virtual void set_checkpoint(CheckpointLevel level) = 0;
  void set_overlap(bool on);  // every sharded conv's interior/halo overlap
  // ConvNeXt blocks keep only conv_dw's and fc1's outputs and recompute the cheap rest in
  // backward (model::block_pointwise); false for a backbone without ConvNeXt blocks.
  bool set_recompute_cheap(bool on);
  // The kernels of those blocks' per-pixel products (parallel.pointwise); false without them.
  bool set_pointwise_kernel(PointwiseKernel k);

  // The layer list it was built from, and views of it: every op that reads across W (the
  // pre-launch check) and the per-rank shapes for a (B, C, H, W) input (the layout event).
  const arch::LayerList& layers() const { return layers_; }
  std::vector<shard::LayerWindow> layer_windows() const { return layers_.windows(); }
  std::vector<arch::LayerShape> layout(int64_t height, int64_t width, int sp) const {
    return arch::layer_shapes(layers_, height, width, sp);
  }
  // The classifier head's parameters see replicated data; everything else sees stripes.
  parallel::GradPlacement grad_placement(const std::string& param_name) const;
  // "head." (ConvNeXt) or "fc." (ResNet): the names of the classifier that a backbone-only
  // model has no place for.
  virtual std::string head_prefix() const = 0;
  // Channels of stage i's output (forward_stages()[i]).
  int64_t stage_channels(int stage) const;

 protected:
  // A stage's blocks in order, checkpointed per block or as a whole stage as `level` says;
  // the layer probe is told each block's output under its layer-list name.
  // The stripe in channels-last (NHWC) memory, as the ResNet and RegNet families run: oneDNN's
  // convolutions, BatchNorm and pooling read and write it in place (no reorder copies of the
  // activations), and every op after the stem keeps the layout.
  static parallel::ShardedTensor channels_last(const parallel::ShardedTensor& x);
  static parallel::ShardedTensor run_stage(const std::vector<Segment>& blocks, const std::vector<std::string>& names,
                                           CheckpointLevel level, parallel::ShardedTensor x);

 private:
  bool for_each_convnext_block(const std::function<void(ConvNeXtBlockImpl&)>& fn);  // false: none

  arch::LayerList layers_;
};

// One block of a stage as every backbone runs it: its weights gathered around it (ZeRO's
// weights stage, model::gated under `name`), checkpointed when `checkpoint` (output_unread: see
// checkpointed()). The caller tells the layer probe once it let go of x.
parallel::ShardedTensor run_block(const std::string& name, const Segment& block, bool checkpoint,
                                  const parallel::ShardedTensor& x, bool output_unread = false);
// The same for a block that is x + branch(x) (a ConvNeXt block): checkpointed, only the branch
// is, on x as its first op casts it (model::checkpointed_residual).
parallel::ShardedTensor run_residual_block(const std::string& name, const Segment& block, const Segment& branch,
                                           bool checkpoint, const parallel::ShardedTensor& x, bool output_unread);

// A backbone by its variant's name (arch::backbone_names()): util::Error naming the choices
// when unknown. classes 0: no head.
std::shared_ptr<BackboneImpl> make_backbone(const std::string& arch, int64_t classes, int64_t in_chans = 3,
                                            double drop_path = 0.0);

}  // namespace halo::model
