// ResNet assembly from the variant's layer list, modules made in timm's order (conv1, bn1,
// layer1..4, fc) so that a seed and a state dict mean the same as there.
#include "model/ResNet.h"

#include <torch/torch.h>

#include "arch/ResNetLayers.h"
#include "model/BatchNorm.h"
#include "model/LayerProbe.h"
#include "parallel/ShardedPool.h"

namespace halo::model {

using parallel::ShardedTensor;

ResNetImpl::ResNetImpl(const arch::ResNetVariant& v, int64_t num_classes, int64_t in_chans)
    : BackboneImpl(arch::resnet_layers(v, num_classes, in_chans)), variant_(v) {
  names_.resize(v.depths.size());
  for (const arch::Layer& l : layers()) {
    switch (l.kind) {
      case arch::LayerKind::ResNetStem:
        conv1 = register_module("conv1", resnet_conv(l.conv("conv1")));
        bn1 = register_module("bn1", resnet_bn(l.norm("bn1")));
        maxpool_ = l.path.back().spec;
        break;
      case arch::LayerKind::BasicBlock:
      case arch::LayerKind::Bottleneck: {
        const auto s = static_cast<size_t>(l.stage);
        if (stages.size() <= s)
          stages.push_back(register_module("layer" + std::to_string(s + 1), torch::nn::ModuleList()));
        stages[s]->push_back(ResNetBlock(l));
        names_[s].push_back(l.name);
        break;
      }
      case arch::LayerKind::PoolFcHead:
        fc = register_module("fc", torch::nn::Linear(l.in_channels, l.out_channels));
        break;
      default:
        break;
    }
  }
}

ShardedTensor ResNetImpl::stage_forward(size_t stage, ShardedTensor x) {
  std::vector<Segment> blocks;
  for (size_t j = 0; j < stages[stage]->size(); ++j) {
    auto block = stages[stage]->ptr<ResNetBlockImpl>(j);
    blocks.push_back([block](const ShardedTensor& t) { return block->forward(t); });
  }
  return run_stage(blocks, names_[stage], checkpoint_, std::move(x));
}

std::vector<ShardedTensor> ResNetImpl::forward_stages(const ShardedTensor& x) {
  ShardedTensor y = batch_norm(*bn1, conv1->forward(channels_last(x)));   // (B, C0, H/2, W/2/world)
  y = parallel::sharded_max_pool2d(y.with(at::relu(y.local)), maxpool_);  // (B, C0, H/4, W/4/world)
  LayerProbe::layer_done("stem", y.local);
  std::vector<ShardedTensor> out;
  for (size_t s = 0; s < stages.size(); ++s) out.push_back(y = stage_forward(s, std::move(y)));
  return out;
}

torch::Tensor ResNetImpl::forward(const ShardedTensor& x) {
  if (!fc) throw std::logic_error("ResNet built without fc: use forward_features or forward_stages");
  torch::Tensor logits = fc->forward(parallel::global_avg_pool(forward_features(x)));  // (B, classes)
  LayerProbe::layer_done("fc", logits);
  return logits;
}

}  // namespace halo::model
