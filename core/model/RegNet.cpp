// RegNetY assembly from the variant's layer list, modules in timm's order (stem, s1..s4,
// head), initialised as timm's _init_weights does (normal(0, sqrt(2 / fan_out)) with fan_out
// divided by the groups, Linear normal(0, 0.01), zero biases, conv3's BatchNorm zero).
#include "model/RegNet.h"

#include <cmath>

#include <torch/torch.h>

#include "arch/RegNetLayers.h"
#include "model/LayerProbe.h"
#include "parallel/ShardedPool.h"

namespace halo::model {

using parallel::ShardedTensor;

namespace {

void regnet_init(torch::nn::Module& root) {
  torch::NoGradGuard no_grad;
  auto normal_fan_out = [](at::Tensor& w, int64_t groups) {
    const int64_t fan_out = w.size(0) * w.size(2) * w.size(3) / groups;
    w.normal_(0.0, std::sqrt(2.0 / static_cast<double>(fan_out)));
  };
  for (auto& m : root.modules(false)) {
    if (auto* c = dynamic_cast<ShardedConv2dImpl*>(m.get())) {
      normal_fan_out(c->weight, c->spec().groups);
    } else if (auto* c2 = dynamic_cast<torch::nn::Conv2dImpl*>(m.get())) {
      normal_fan_out(c2->weight, c2->options.groups());
      c2->bias.zero_();
    } else if (auto* fc = dynamic_cast<torch::nn::LinearImpl*>(m.get())) {
      fc->weight.normal_(0.0, 0.01);
      fc->bias.zero_();
    }
  }
}

}  // namespace

PoolFcHeadImpl::PoolFcHeadImpl(int64_t dim, int64_t classes) {
  fc = register_module("fc", torch::nn::Linear(dim, classes));
}

RegNetImpl::RegNetImpl(const arch::RegNetVariant& v, int64_t num_classes, int64_t in_chans)
    : BackboneImpl(arch::regnet_layers(v, num_classes, in_chans)) {
  names_.resize(v.depths.size());
  for (const arch::Layer& l : layers()) {
    if (l.kind == arch::LayerKind::RegNetStem) {
      stem = register_module("stem", ConvBn(l.conv("conv"), l.norm("bn"), true));
    } else if (l.kind == arch::LayerKind::RegNetBlock) {
      const auto s = static_cast<size_t>(l.stage);
      if (stages.size() <= s) stages.push_back(register_module("s" + std::to_string(s + 1), torch::nn::ModuleDict()));
      stages[s]->update(std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>>{
          {"b" + std::to_string(l.block + 1), RegNetBlock(l).ptr()}});
      names_[s].push_back(l.name);
    } else if (l.kind == arch::LayerKind::PoolFcHead) {
      head = register_module("head", PoolFcHead(l.in_channels, l.out_channels));
    }
  }
  // The zero-initialised last BatchNorms are BatchNorms, not convs: regnet_init leaves them.
  regnet_init(*this);
}

ShardedTensor RegNetImpl::stage_forward(size_t stage, ShardedTensor x) {
  std::vector<Segment> blocks;
  for (const auto& m : stages[stage]->values()) {
    auto block = std::dynamic_pointer_cast<RegNetBlockImpl>(m);
    blocks.push_back([block](const ShardedTensor& t) { return block->forward(t); });
  }
  return run_stage(blocks, names_[stage], checkpoint_, std::move(x));
}

std::vector<ShardedTensor> RegNetImpl::forward_stages(const ShardedTensor& x) {
  ShardedTensor y = stem->forward(channels_last(x));  // (B, C0, H/2, W/2/world)
  LayerProbe::layer_done("stem", y.local);
  std::vector<ShardedTensor> out;
  for (size_t s = 0; s < stages.size(); ++s) out.push_back(y = stage_forward(s, std::move(y)));
  return out;
}

torch::Tensor RegNetImpl::forward(const ShardedTensor& x) {
  if (!head) throw std::logic_error("RegNet built without a head: use forward_features or forward_stages");
  torch::Tensor logits = head->fc->forward(parallel::global_avg_pool(forward_features(x)));  // (B, classes)
  LayerProbe::layer_done("head", logits);
  return logits;
}

}  // namespace halo::model
