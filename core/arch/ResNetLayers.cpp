// ResNet's structure as timm's resnet.py builds it (v1.5: the stride on the 3x3 conv, a
// 1x1 conv + BatchNorm shortcut where the shape changes): the only place these numbers are.
#include "arch/ResNetLayers.h"

#include <string>
#include <utility>

namespace halo::arch {

namespace {

constexpr int64_t kStemKernel = 7;  // conv1: 7x7, stride 2, padding 3
constexpr int64_t kExpansion = 4;   // a bottleneck's conv3: planes -> 4 planes
constexpr double kBnEps = 1e-5;

// `prefix` is the module path of the layer's parameters ("" for the stem, "layer1.0.").
void add_conv(Layer& l, const std::string& prefix, Conv c, bool on_path) {
  const std::string module = prefix + c.name;
  l.add_conv(std::move(c), module, on_path);
}

void add_bn(Layer& l, const std::string& prefix, std::string name, int64_t channels) {
  const std::string module = prefix + name;
  l.add_norm({std::move(name), channels, kBnEps, true}, module);
}

Conv conv(std::string name, int64_t in, int64_t out, int64_t k, int64_t stride) {
  return {.name = std::move(name),
          .spec = shard::ConvSpec::square(k, stride, k / 2),
          .in_channels = in,
          .out_channels = out,
          .bias = false};
}

Layer stem(const ResNetVariant& v, int64_t in_chans) {
  Layer l{.name = "stem", .kind = LayerKind::ResNetStem, .in_channels = in_chans, .out_channels = v.stem_width};
  add_conv(l, "", conv("conv1", in_chans, v.stem_width, kStemKernel, 2), true);
  add_bn(l, "", "bn1", v.stem_width);
  l.path.push_back({"maxpool", shard::ConvSpec::square(3, 2, 1)});
  return l;
}

Layer block(const ResNetVariant& v, int stage, int index, int64_t in, int64_t stride) {
  const int64_t planes = v.widths[static_cast<size_t>(stage)];
  const int64_t out = v.bottleneck ? planes * kExpansion : planes;
  Layer l{.name = "layer" + std::to_string(stage + 1) + "." + std::to_string(index),
          .kind = v.bottleneck ? LayerKind::Bottleneck : LayerKind::BasicBlock,
          .stage = stage,
          .block = index,
          .in_channels = in,
          .out_channels = out,
          .hidden = planes};
  const std::string p = l.name + ".";
  if (v.bottleneck) {
    add_conv(l, p, conv("conv1", in, planes, 1, 1), true);
    add_bn(l, p, "bn1", planes);
    add_conv(l, p, conv("conv2", planes, planes, 3, stride), true);
    add_bn(l, p, "bn2", planes);
    add_conv(l, p, conv("conv3", planes, out, 1, 1), true);
    add_bn(l, p, "bn3", out);
  } else {
    add_conv(l, p, conv("conv1", in, planes, 3, stride), true);
    add_bn(l, p, "bn1", planes);
    add_conv(l, p, conv("conv2", planes, planes, 3, 1), true);
    add_bn(l, p, "bn2", planes);
  }
  if (stride != 1 || in != out) {
    Conv shortcut = conv("downsample.0", in, out, 1, stride);
    shortcut.spec.padding = {0, 0};
    add_conv(l, p, std::move(shortcut), false);
    add_bn(l, p, "downsample.1", out);
  }
  return l;
}

Layer head(int stage, int64_t dim, int64_t classes) {
  Layer l{.name = "fc", .kind = LayerKind::PoolFcHead, .stage = stage, .in_channels = dim, .out_channels = classes};
  l.add_conv({.name = "fc", .in_channels = dim, .out_channels = classes, .linear = true}, "fc", false);
  return l;
}

}  // namespace

LayerList resnet_layers(const ResNetVariant& v, int64_t classes, int64_t in_chans) {
  std::vector<Layer> layers{stem(v, in_chans)};
  int64_t in = v.stem_width;
  for (int s = 0; s < static_cast<int>(v.depths.size()); ++s)
    for (int j = 0; j < v.depths[static_cast<size_t>(s)]; ++j) {
      layers.push_back(block(v, s, j, in, j == 0 && s > 0 ? 2 : 1));
      in = layers.back().out_channels;
    }
  if (classes > 0) layers.push_back(head(static_cast<int>(v.depths.size()), in, classes));
  return LayerList(std::move(layers));
}

}  // namespace halo::arch
