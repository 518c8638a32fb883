// ConvNeXt's structure as timm's convnext.py builds it (patch 4, downsample 2x2/2, 7x7
// depthwise conv_dw, MLP ratio 4): the only place these numbers are written.
#include "arch/ConvNeXtLayers.h"

#include <string>

namespace halo::arch {

namespace {

constexpr int64_t kPatch = 4;       // stem: 4x4 conv, stride 4
constexpr int64_t kDownsample = 2;  // between stages: 2x2 conv, stride 2
constexpr int64_t kKernel = 7;      // conv_dw: 7x7 depthwise, padding 3
constexpr int64_t kMlpRatio = 4;    // fc1: dim -> 4 dim

void add_conv(Layer& l, Conv c) {
  const std::string module = l.qualified(c.name);
  l.add_conv(std::move(c), module);
}

void add_norm(Layer& l, std::string name, int64_t channels, double eps) {
  const std::string module = l.qualified(name);
  l.add_norm({std::move(name), channels, eps}, module);
}

Layer stem(const ConvNeXtVariant& v, int64_t in_chans) {
  Layer l{.name = "stem", .kind = LayerKind::PatchStem, .in_channels = in_chans, .out_channels = v.dims[0]};
  add_conv(l, {.name = "0",
               .spec = shard::ConvSpec::square(kPatch, kPatch),
               .in_channels = in_chans,
               .out_channels = v.dims[0]});
  add_norm(l, "1", v.dims[0], v.norm_eps);
  return l;
}

Layer downsample(int stage, int64_t in_dim, int64_t dim, double eps) {
  Layer l{.name = "stages." + std::to_string(stage) + ".downsample",
          .kind = LayerKind::NormConvDownsample,
          .stage = stage,
          .in_channels = in_dim,
          .out_channels = dim};
  add_norm(l, "0", in_dim, eps);
  add_conv(l, {.name = "1",
               .spec = shard::ConvSpec::square(kDownsample, kDownsample),
               .in_channels = in_dim,
               .out_channels = dim});
  return l;
}

Layer head(int stage, int64_t dim, int64_t classes, double eps) {
  Layer l{.name = "head", .kind = LayerKind::NormMlpHead, .stage = stage, .in_channels = dim, .out_channels = classes};
  add_norm(l, "norm", dim, eps);
  add_conv(l, {.name = "fc", .in_channels = dim, .out_channels = classes, .linear = true});
  return l;
}

}  // namespace

Layer convnext_block(int stage, int block, int64_t dim, bool conv_mlp, double norm_eps) {
  Layer l{.name = "stages." + std::to_string(stage) + ".blocks." + std::to_string(block),
          .kind = LayerKind::ConvNeXtBlock,
          .stage = stage,
          .block = block,
          .in_channels = dim,
          .out_channels = dim,
          .hidden = kMlpRatio * dim};
  l.parameters.push_back({l.qualified("gamma"), {dim}});  // own parameters come before the children's
  const shard::ConvSpec dw = shard::ConvSpec::square(kKernel, 1, kKernel / 2, 1, dim);
  add_conv(l, {.name = "conv_dw", .spec = dw, .in_channels = dim, .out_channels = dim});
  add_norm(l, "norm", dim, norm_eps);
  add_conv(l, {.name = "mlp.fc1", .in_channels = dim, .out_channels = l.hidden, .linear = !conv_mlp});
  add_conv(l, {.name = "mlp.fc2", .in_channels = l.hidden, .out_channels = dim, .linear = !conv_mlp});
  return l;
}

std::vector<Layer> convnext_stage(int stage, int64_t in_dim, int64_t dim, int depth, bool conv_mlp, double norm_eps) {
  std::vector<Layer> out;
  if (stage > 0) out.push_back(downsample(stage, in_dim, dim, norm_eps));
  for (int j = 0; j < depth; ++j) out.push_back(convnext_block(stage, j, dim, conv_mlp, norm_eps));
  return out;
}

LayerList convnext_layers(const ConvNeXtVariant& v, int64_t classes, int64_t in_chans) {
  std::vector<Layer> layers{stem(v, in_chans)};
  const int stages = static_cast<int>(v.depths.size());
  for (int i = 0; i < stages; ++i) {
    const auto s = static_cast<size_t>(i);
    auto stage = convnext_stage(i, v.dims[s > 0 ? s - 1 : 0], v.dims[s], v.depths[s], v.conv_mlp, v.norm_eps);
    layers.insert(layers.end(), stage.begin(), stage.end());
  }
  if (classes > 0) layers.push_back(head(stages, v.dims[static_cast<size_t>(stages - 1)], classes, v.norm_eps));
  return LayerList(std::move(layers));
}

}  // namespace halo::arch
