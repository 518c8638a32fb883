// ConvNeXt assembly from the variant's layer list: names follow timm (stem.0,
// stages.i.downsample.1, stages.i.blocks.j, head.norm, head.fc) so state dicts load both ways.
#include "model/ConvNeXt.h"

#include <torch/torch.h>

#include "model/Init.h"
#include "model/LayerProbe.h"
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

ConvNeXtStageImpl::ConvNeXtStageImpl(const std::vector<arch::Layer>& layers, std::vector<double> drop_path) {
  downsample = register_module("downsample", torch::nn::ModuleList());
  blocks = register_module("blocks", torch::nn::ModuleList());
  size_t j = 0;
  for (const arch::Layer& l : layers) {
    names_.push_back(l.name);
    if (l.kind == arch::LayerKind::NormConvDownsample) {
      const arch::Norm& n = l.norm("0");
      const arch::Conv& c = l.conv("1");
      downsample->push_back(LayerNorm2d(n.channels, n.eps));
      downsample->push_back(ShardedConv2d(c.in_channels, c.out_channels, c.spec, c.bias));
    } else {
      blocks->push_back(ConvNeXtBlock(l, 1e-6, j < drop_path.size() ? drop_path[j] : 0.0));
      ++j;
    }
  }
}

ConvNeXtStageImpl::ConvNeXtStageImpl(int64_t in_dim, int64_t out_dim, int depth, bool with_downsample, bool conv_mlp,
                                     double norm_eps, std::vector<double> drop_path)
    : ConvNeXtStageImpl(arch::convnext_stage(with_downsample ? 1 : 0, in_dim, out_dim, depth, conv_mlp, norm_eps),
                        std::move(drop_path)) {}

ShardedTensor ConvNeXtStageImpl::forward(ShardedTensor x) {
  if (checkpoint == CheckpointLevel::Stage) {
    ShardedTensor y = checkpointed([this](const ShardedTensor& in) { return forward_inner(in); }, x);
    LayerProbe::output_is(y.local);  // the stage ran without grad: its output is this one
    return y;
  }
  return forward_inner(std::move(x));
}

ShardedTensor ConvNeXtStageImpl::forward_inner(ShardedTensor x) {
  if (!downsample->is_empty()) {
    x = x.with(downsample->at<LayerNorm2dImpl>(0).forward(x.local));
    x = downsample->at<ShardedConv2dImpl>(1).forward(x);
    LayerProbe::layer_done(names_.front(), x.local);
  }
  for (size_t j = 0; j < blocks->size(); ++j) {
    auto& block = blocks->at<ConvNeXtBlockImpl>(j);
    const std::string& name = names_[names_.size() - blocks->size() + j];
    x = run_residual_block(
        name, [&block](const ShardedTensor& in) { return block.forward(in); },
        [&block](const ShardedTensor& in) { return block.branch(in); }, checkpoint == CheckpointLevel::Block, x,
        /*output_unread=*/true);
    LayerProbe::layer_done(name, x.local);
  }
  return x;
}

namespace {

// timm: rates rise linearly from 0 to drop_path_rate over all blocks; one list per stage.
std::vector<std::vector<double>> drop_path_rates(const arch::LayerList& layers, double rate) {
  int total = 0;
  for (const arch::Layer& l : layers) total += l.kind == arch::LayerKind::ConvNeXtBlock;
  std::vector<std::vector<double>> rates(static_cast<size_t>(layers.stage_count()));
  int b = 0;
  for (const arch::Layer& l : layers) {
    if (l.kind != arch::LayerKind::ConvNeXtBlock) continue;
    rates[static_cast<size_t>(l.stage)].push_back(total > 1 ? rate * b / (total - 1) : 0.0);
    ++b;
  }
  return rates;
}

}  // namespace

ConvNeXtImpl::ConvNeXtImpl(const arch::ConvNeXtVariant& v, int64_t num_classes, int64_t in_chans, double drop_path_rate)
    : BackboneImpl(arch::convnext_layers(v, num_classes, in_chans)), variant_(v) {
  // Modules are made in forward order (stem, stages, head): their initialisation draws from
  // the default generator in that order, so a seed gives the same weights as before.
  const auto rates = drop_path_rates(layers(), drop_path_rate);
  std::vector<std::vector<arch::Layer>> stage_layers(rates.size());
  const arch::Layer* head_layer = nullptr;
  stem = register_module("stem", torch::nn::ModuleList());
  for (const arch::Layer& l : layers()) {
    if (l.kind == arch::LayerKind::PatchStem) {
      const arch::Conv& c = l.conv("0");
      const arch::Norm& n = l.norm("1");
      stem->push_back(ShardedConv2d(c.in_channels, c.out_channels, c.spec, c.bias));
      stem->push_back(LayerNorm2d(n.channels, n.eps));
    } else if (l.kind == arch::LayerKind::NormMlpHead) {
      head_layer = &l;
    } else {
      stage_layers.at(static_cast<size_t>(l.stage)).push_back(l);
    }
  }
  stages = register_module("stages", torch::nn::ModuleList());
  for (size_t i = 0; i < stage_layers.size(); ++i) stages->push_back(ConvNeXtStage(stage_layers[i], rates[i]));
  if (head_layer)
    head = register_module(
        "head", ConvNeXtHead(head_layer->in_channels, head_layer->out_channels, head_layer->norm("norm").eps));
}

std::vector<ShardedTensor> ConvNeXtImpl::forward_stages(const ShardedTensor& x) {
  ShardedTensor y = stem->at<ShardedConv2dImpl>(0).forward(x);  // (B, C0, H/4, W/4/world)
  y = y.with(stem->at<LayerNorm2dImpl>(1).forward(y.local));
  LayerProbe::layer_done("stem", y.local);
  std::vector<ShardedTensor> out;
  for (size_t i = 0; i < stages->size(); ++i) out.push_back(y = stages->at<ConvNeXtStageImpl>(i).forward(y));
  return out;
}

torch::Tensor ConvNeXtImpl::forward(const ShardedTensor& x) {
  if (!head) throw std::logic_error("ConvNeXt built without a head: use forward_features or forward_stages");
  torch::Tensor logits = head->forward(parallel::global_avg_pool(forward_features(x)));  // (B, classes)
  LayerProbe::layer_done("head", logits);
  return logits;
}

void ConvNeXtImpl::set_checkpoint(CheckpointLevel level) {
  for (size_t i = 0; i < stages->size(); ++i) stages->at<ConvNeXtStageImpl>(i).checkpoint = level;
}

}  // namespace halo::model
