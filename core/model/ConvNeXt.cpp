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

torch::Tensor ConvNeXtHeadImpl::forward(const torch::Tensor& pooled) { return fc->forward(norm->forward_last(pooled)); }

ConvNeXtStageImpl::ConvNeXtStageImpl(int64_t in_dim, int64_t out_dim, int depth, bool with_downsample, bool conv_mlp,
                                     double norm_eps, std::vector<double> drop_path) {
  downsample = register_module("downsample", torch::nn::ModuleList());
  if (with_downsample) {
    downsample->push_back(LayerNorm2d(in_dim, norm_eps));
    downsample->push_back(ShardedConv2d(in_dim, out_dim, shard::ConvSpec::square(2, 2)));
  }
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int j = 0; j < depth; ++j)
    blocks->push_back(
        ConvNeXtBlock(out_dim, conv_mlp, norm_eps, 1e-6, j < static_cast<int>(drop_path.size()) ? drop_path[j] : 0.0));
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

ConvNeXtImpl::ConvNeXtImpl(const arch::ConvNeXtVariant& v, int64_t num_classes, int64_t in_chans, double drop_path_rate)
    : variant_(v) {
  // timm: rates rise linearly from 0 to drop_path_rate over all blocks.
  const int total = v.depths[0] + v.depths[1] + v.depths[2] + v.depths[3];
  std::vector<std::vector<double>> rates(4);
  for (int i = 0, b = 0; i < 4; ++i)
    for (int j = 0; j < v.depths[i]; ++j, ++b) rates[i].push_back(total > 1 ? drop_path_rate * b / (total - 1) : 0.0);
  stem = register_module("stem", torch::nn::ModuleList());
  stem->push_back(ShardedConv2d(in_chans, v.dims[0], shard::ConvSpec::square(4, 4)));
  stem->push_back(LayerNorm2d(v.dims[0], v.norm_eps));
  stages = register_module("stages", torch::nn::ModuleList());
  for (int i = 0; i < 4; ++i)
    stages->push_back(ConvNeXtStage(i == 0 ? v.dims[0] : v.dims[i - 1], v.dims[i], v.depths[i], i > 0, v.conv_mlp,
                                    v.norm_eps, rates[i]));
  if (num_classes > 0) head = register_module("head", ConvNeXtHead(v.dims[3], num_classes, v.norm_eps));
}

ShardedTensor ConvNeXtImpl::forward_features(const ShardedTensor& x) { return forward_stages(x).back(); }

std::vector<ShardedTensor> ConvNeXtImpl::forward_stages(const ShardedTensor& x) {
  ShardedTensor y = stem->at<ShardedConv2dImpl>(0).forward(x);  // (B, C0, H/4, W/4/world)
  y = y.with(stem->at<LayerNorm2dImpl>(1).forward(y.local));
  std::vector<ShardedTensor> out;
  for (size_t i = 0; i < stages->size(); ++i) out.push_back(y = stages->at<ConvNeXtStageImpl>(i).forward(y));
  return out;
}

torch::Tensor ConvNeXtImpl::forward(const ShardedTensor& x) {
  if (!head) throw std::logic_error("ConvNeXt built without a head: use forward_features or forward_stages");
  return head->forward(parallel::global_avg_pool(forward_features(x)));  // (B, classes)
}

std::vector<shard::LayerWindow> ConvNeXtImpl::layer_windows() const {
  std::vector<shard::LayerWindow> out;
  auto add = [&](std::string name, const ShardedConv2dImpl& c) {
    out.push_back({std::move(name), c.spec().along_w()});
  };
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

std::vector<ConvNeXtImpl::LayerShape> ConvNeXtImpl::layout(int64_t height, int64_t width, int sp) const {
  std::vector<LayerShape> out;
  shard::Partition part = shard::even_partition(width, sp);
  int64_t h = height;
  size_t stage = 0;
  for (const auto& lw : layer_windows()) {
    const shard::Window& w = lw.window;
    LayerShape s{lw.name, 0, 0, w, part, shard::output_partition(part, w)};
    h = (h + 2 * w.padding - w.reach()) / w.stride + 1;  // square windows: H follows W's geometry
    if (lw.name == "stem.0") s.channels = variant_.dims[0];
    if (lw.name.rfind("stages.", 0) == 0) stage = static_cast<size_t>(lw.name[7] - '0');
    if (s.channels == 0) s.channels = variant_.dims[stage];
    s.height = h;
    part = s.out;
    out.push_back(std::move(s));
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
