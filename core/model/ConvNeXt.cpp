// ConvNeXt assembly: names follow timm (stem.0, stages.i.downsample.1, stages.i.blocks.j,
// head.norm, head.fc) so state dicts load both ways.
#include "model/ConvNeXt.h"

#include <torch/torch.h>

#include "model/Init.h"
#include "parallel/ShardedPool.h"

namespace halo::model {

using parallel::ShardedTensor;

ConvNeXtHeadImpl::ConvNeXtHeadImpl(int64_t dim, int64_t num_classes, double norm_eps) {
  norm = register_module("norm", LayerNorm2d(dim, norm_eps));
  fc = register_module("fc", torch::nn::Linear(dim, num_classes));
  trunc_normal_(fc->weight, 0.02);
  torch::NoGradGuard no_grad;
  fc->bias.zero_();
}

torch::Tensor ConvNeXtHeadImpl::forward(const torch::Tensor& pooled) {
  return fc->forward(norm->forward_last(pooled));
}

ConvNeXtStageImpl::ConvNeXtStageImpl(int64_t in_dim, int64_t out_dim, int depth, bool with_downsample,
                                     bool conv_mlp, double norm_eps) {
  downsample = register_module("downsample", torch::nn::ModuleList());
  if (with_downsample) {
    downsample->push_back(LayerNorm2d(in_dim, norm_eps));
    downsample->push_back(ShardedConv2d(in_dim, out_dim, parallel::ConvSpec::square(2, 2)));
  }
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int j = 0; j < depth; ++j) blocks->push_back(ConvNeXtBlock(out_dim, conv_mlp, norm_eps));
}

ShardedTensor ConvNeXtStageImpl::forward(ShardedTensor x) {
  if (checkpoint == CheckpointLevel::Stage)
    return checkpointed([this](const ShardedTensor& in) { return forward_inner(in); }, x);
  return forward_inner(std::move(x));
}

ShardedTensor ConvNeXtStageImpl::forward_inner(ShardedTensor x) {
  if (!downsample->is_empty()) {
    x = x.with(downsample->at<LayerNorm2dImpl>(0).forward(x.local));
    x = downsample->at<ShardedConv2dImpl>(1).forward(x);
  }
  for (size_t j = 0; j < blocks->size(); ++j) {
    auto& block = blocks->at<ConvNeXtBlockImpl>(j);
    if (checkpoint == CheckpointLevel::Block)
      x = checkpointed([&block](const ShardedTensor& in) { return block.forward(in); }, x);
    else
      x = block.forward(x);
  }
  return x;
}

ConvNeXtImpl::ConvNeXtImpl(const ConvNeXtVariant& v, int64_t num_classes, int64_t in_chans) : variant_(v) {
  stem = register_module("stem", torch::nn::ModuleList());
  stem->push_back(ShardedConv2d(in_chans, v.dims[0], parallel::ConvSpec::square(4, 4)));
  stem->push_back(LayerNorm2d(v.dims[0], v.norm_eps));
  stages = register_module("stages", torch::nn::ModuleList());
  for (int i = 0; i < 4; ++i)
    stages->push_back(ConvNeXtStage(i == 0 ? v.dims[0] : v.dims[i - 1], v.dims[i], v.depths[i], i > 0, v.conv_mlp,
                                    v.norm_eps));
  head = register_module("head", ConvNeXtHead(v.dims[3], num_classes, v.norm_eps));
}

ShardedTensor ConvNeXtImpl::forward_features(const ShardedTensor& x) {
  ShardedTensor y = stem->at<ShardedConv2dImpl>(0).forward(x);  // (B, C0, H/4, W/4/world)
  y = y.with(stem->at<LayerNorm2dImpl>(1).forward(y.local));
  for (size_t i = 0; i < stages->size(); ++i) y = stages->at<ConvNeXtStageImpl>(i).forward(y);
  return y;
}

torch::Tensor ConvNeXtImpl::forward(const ShardedTensor& x) {
  return head->forward(parallel::global_avg_pool(forward_features(x)));  // (B, classes)
}

std::vector<parallel::LayerWindow> ConvNeXtImpl::layer_windows() const {
  std::vector<parallel::LayerWindow> out;
  auto add = [&](std::string name, const ShardedConv2dImpl& c) { out.push_back({std::move(name), c.spec().along_w()}); };
  add("stem.0", stem->at<ShardedConv2dImpl>(0));
  for (size_t i = 0; i < stages->size(); ++i) {
    const auto& st = stages->at<ConvNeXtStageImpl>(i);
    if (!st.downsample->is_empty())
      add("stages." + std::to_string(i) + ".downsample.1", st.downsample->at<ShardedConv2dImpl>(1));
    for (size_t j = 0; j < st.blocks->size(); ++j)
      add("stages." + std::to_string(i) + ".blocks." + std::to_string(j) + ".conv_dw",
          *st.blocks->at<ConvNeXtBlockImpl>(j).conv_dw);
  }
  return out;
}

parallel::GradPlacement ConvNeXtImpl::placement(const std::string& name) {
  return name.rfind("head.", 0) == 0 ? parallel::GradPlacement::Replicate : parallel::GradPlacement::Partial;
}

void ConvNeXtImpl::set_checkpoint(CheckpointLevel level) {
  for (size_t i = 0; i < stages->size(); ++i) stages->at<ConvNeXtStageImpl>(i).checkpoint = level;
}

void ConvNeXtImpl::set_overlap(bool on) {
  for (auto& m : modules(false))
    if (auto* c = dynamic_cast<ShardedConv2dImpl*>(m.get())) c->set_overlap(on);
}

}  // namespace halo::model
