// RegNetY's structure as timm's regnet.py builds it: a 3x3/2 ConvNormAct stem; blocks s<i>.b<j>
// of conv1 (1x1), conv2 (3x3 grouped, stride 2 in each stage's first block), se (fc1, fc2),
// conv3 (1x1, no act), a 1x1 conv + BN shortcut where the shape changes; head.fc.
#include "arch/RegNetLayers.h"

#include <cmath>
#include <string>
#include <utility>

namespace halo::arch {

namespace {

constexpr double kBnEps = 1e-5;

// A ConvNormAct `name` (conv without bias, then BatchNorm): timm's name.conv / name.bn.
void add_conv_bn(Layer& l, const std::string& name, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t groups,
                 bool on_path) {
  const std::string p = l.qualified(name);
  l.add_conv({.name = name + ".conv",
              .spec = shard::ConvSpec::square(k, stride, k / 2, 1, groups),
              .in_channels = in,
              .out_channels = out,
              .bias = false},
             p + ".conv", on_path);
  l.add_norm({name + ".bn", out, kBnEps, true}, p + ".bn");
}

// A 1x1 conv with bias of the SE module (timm's se.fc1, se.fc2).
void add_se_fc(Layer& l, const std::string& name, int64_t in, int64_t out) {
  l.add_conv({.name = name, .in_channels = in, .out_channels = out}, l.qualified(name), false);
}

Layer stem(const RegNetVariant& v, int64_t in_chans) {
  Layer l{.name = "stem", .kind = LayerKind::RegNetStem, .in_channels = in_chans, .out_channels = v.stem_width};
  l.add_conv({.name = "conv",
              .spec = shard::ConvSpec::square(3, 2, 1),
              .in_channels = in_chans,
              .out_channels = v.stem_width,
              .bias = false},
             "stem.conv");
  l.add_norm({"bn", v.stem_width, kBnEps, true}, "stem.bn");
  return l;
}

Layer block(const RegNetVariant& v, int stage, int index, int64_t in, int64_t stride) {
  const int64_t w = v.widths[static_cast<size_t>(stage)];
  const int64_t se = static_cast<int64_t>(std::lround(static_cast<double>(in) * v.se_ratio));
  Layer l{.name = "s" + std::to_string(stage + 1) + ".b" + std::to_string(index + 1),
          .kind = LayerKind::RegNetBlock,
          .stage = stage,
          .block = index,
          .in_channels = in,
          .out_channels = w,
          .hidden = se};
  add_conv_bn(l, "conv1", in, w, 1, 1, 1, true);
  add_conv_bn(l, "conv2", w, w, 3, stride, w / v.group_width, true);
  // SE: 1x1 convs with bias on the pooled (B, C, 1, 1) vector; nothing across W.
  add_se_fc(l, "se.fc1", w, se);
  add_se_fc(l, "se.fc2", se, w);
  add_conv_bn(l, "conv3", w, w, 1, 1, 1, true);
  if (stride != 1 || in != w) add_conv_bn(l, "downsample", in, w, 1, stride, 1, false);
  return l;
}

Layer head(int stage, int64_t dim, int64_t classes) {
  Layer l{.name = "head", .kind = LayerKind::PoolFcHead, .stage = stage, .in_channels = dim, .out_channels = classes};
  l.add_conv({.name = "fc", .in_channels = dim, .out_channels = classes, .linear = true}, "head.fc", false);
  return l;
}

}  // namespace

LayerList regnet_layers(const RegNetVariant& v, int64_t classes, int64_t in_chans) {
  std::vector<Layer> layers{stem(v, in_chans)};
  int64_t in = v.stem_width;
  for (int s = 0; s < static_cast<int>(v.depths.size()); ++s)
    for (int j = 0; j < v.depths[static_cast<size_t>(s)]; ++j) {
      layers.push_back(block(v, s, j, in, j == 0 ? 2 : 1));
      in = layers.back().out_channels;
    }
  if (classes > 0) layers.push_back(head(static_cast<int>(v.depths.size()), in, classes));
  return LayerList(std::move(layers));
}

}  // namespace halo::arch
