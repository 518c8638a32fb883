// The family-independent half of a backbone: read off its layer list, so a new family only
// writes its modules and forward.
#include "model/Backbone.h"

#include "model/ConvNeXtBlock.h"

#include <fmt/format.h>

#include "arch/Backbones.h"
#include "model/ConvNeXt.h"
#include "model/LayerProbe.h"
#include "model/RegNet.h"
#include "model/ResNet.h"
#include "model/ShardedConv2d.h"
#include "model/WeightGate.h"
#include "util/Error.h"

namespace halo::model {

namespace {

bool is_head(arch::LayerKind k) { return k == arch::LayerKind::NormMlpHead || k == arch::LayerKind::PoolFcHead; }

}  // namespace

void BackboneImpl::set_overlap(bool on) {
  for (auto& m : modules(false))
    if (auto* c = dynamic_cast<ShardedConv2dImpl*>(m.get())) c->set_overlap(on);
}

bool BackboneImpl::set_recompute_cheap(bool on) {
  return for_each_convnext_block([on](ConvNeXtBlockImpl& b) { b.set_recompute_cheap(on); });
}

bool BackboneImpl::set_pointwise_kernel(PointwiseKernel k) {
  return for_each_convnext_block([k](ConvNeXtBlockImpl& b) { b.set_pointwise_kernel(k); });
}

bool BackboneImpl::for_each_convnext_block(const std::function<void(ConvNeXtBlockImpl&)>& fn) {
  bool any = false;
  for (auto& m : modules(false))
    if (auto* b = dynamic_cast<ConvNeXtBlockImpl*>(m.get())) {
      fn(*b);
      any = true;
    }
  return any;
}

parallel::GradPlacement BackboneImpl::grad_placement(const std::string& name) const {
  return name.rfind(head_prefix(), 0) == 0 ? parallel::GradPlacement::Replicate : parallel::GradPlacement::Partial;
}

parallel::ShardedTensor BackboneImpl::channels_last(const parallel::ShardedTensor& x) {
  return x.with(x.local.contiguous(at::MemoryFormat::ChannelsLast));
}

int64_t BackboneImpl::stage_channels(int stage) const {
  int64_t c = 0;
  for (const arch::Layer& l : layers_)
    if (l.stage == stage && !is_head(l.kind)) c = l.out_channels;
  if (c == 0) throw util::Error(fmt::format("the backbone has no stage {}", stage));
  return c;
}

parallel::ShardedTensor BackboneImpl::run_stage(const std::vector<Segment>& blocks,
                                                const std::vector<std::string>& names, CheckpointLevel level,
                                                parallel::ShardedTensor x) {
  auto run = [blocks, names, level](parallel::ShardedTensor in) {
    for (size_t j = 0; j < blocks.size(); ++j) {
      in = run_block(names[j], blocks[j], level == CheckpointLevel::Block, in);
      LayerProbe::layer_done(names[j], in.local);
    }
    return in;
  };
  if (level != CheckpointLevel::Stage) return run(std::move(x));  // the stage's input goes after its first block
  parallel::ShardedTensor y = checkpointed(run, x);
  LayerProbe::output_is(y.local);  // the stage ran without grad: its output is this one
  return y;
}

parallel::ShardedTensor run_block(const std::string& name, const Segment& block, bool checkpoint,
                                  const parallel::ShardedTensor& x, bool output_unread) {
  if (!checkpoint) return gated(name, block, x);
  return gated(
      name, [&](const parallel::ShardedTensor& t) { return checkpointed(block, t, output_unread); }, x);
}

parallel::ShardedTensor run_residual_block(const std::string& name, const Segment& block, const Segment& branch,
                                           bool checkpoint, const parallel::ShardedTensor& x, bool output_unread) {
  if (!checkpoint) return gated(name, block, x);
  return gated(
      name, [&](const parallel::ShardedTensor& t) { return checkpointed_residual(branch, t, output_unread); }, x);
}

std::shared_ptr<BackboneImpl> make_backbone(const std::string& arch, int64_t classes, int64_t in_chans,
                                            double drop_path) {
  if (auto v = arch::find_convnext_variant(arch))
    return std::make_shared<ConvNeXtImpl>(*v, classes, in_chans, drop_path);
  if (drop_path > 0 && arch::backbone_family(arch))
    throw util::Error(
        fmt::format("model.drop_path {} is for ConvNeXt; {} has no stochastic depth here", drop_path, arch),
        "set model.drop_path to 0");
  if (auto v = arch::find_resnet_variant(arch)) return std::make_shared<ResNetImpl>(*v, classes, in_chans);
  if (auto v = arch::find_regnet_variant(arch)) return std::make_shared<RegNetImpl>(*v, classes, in_chans);
  throw util::Error(fmt::format("model.arch '{}' is unknown", arch), "choose one of: " + arch::backbone_names());
}

}  // namespace halo::model
