// Shapes and lookups of a layer's parts; a missing part is a bug in a layer table, reported
// with the layer's name.
#include "arch/Layer.h"

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::arch {

const char* name_of(LayerKind kind) {
  switch (kind) {
    case LayerKind::PatchStem:
      return "patch_stem";
    case LayerKind::NormConvDownsample:
      return "norm_conv_downsample";
    case LayerKind::ConvNeXtBlock:
      return "convnext_block";
    case LayerKind::NormMlpHead:
      return "norm_mlp_head";
    case LayerKind::ResNetStem:
      return "resnet_stem";
    case LayerKind::BasicBlock:
      return "basic_block";
    case LayerKind::Bottleneck:
      return "bottleneck";
    case LayerKind::PoolFcHead:
      return "pool_fc_head";
    case LayerKind::RegNetStem:
      return "regnet_stem";
    case LayerKind::RegNetBlock:
      return "regnet_block";
  }
  return "unknown";
}

std::vector<int64_t> Conv::weight_shape() const {
  if (linear) return {out_channels, in_channels};
  return {out_channels, in_channels / spec.groups, spec.kernel[0], spec.kernel[1]};
}

int64_t Conv::weight_elements() const {
  return out_channels * (in_channels / spec.groups) * spec.kernel[0] * spec.kernel[1];
}

int64_t Parameter::numel() const {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

const Conv& Layer::conv(std::string_view part) const {
  for (const Conv& c : convs)
    if (c.name == part) return c;
  throw util::Error(fmt::format("layer {} ({}) has no conv '{}'", name, name_of(kind), part));
}

const Norm& Layer::norm(std::string_view part) const {
  for (const Norm& n : norms)
    if (n.name == part) return n;
  throw util::Error(fmt::format("layer {} ({}) has no norm '{}'", name, name_of(kind), part));
}

std::optional<shard::Window> Layer::window() const {
  if (!across_w) return std::nullopt;
  return convs.at(*across_w).spec.along_w();
}

int64_t Layer::stride_w() const {
  int64_t s = 1;
  for (const PathOp& op : path) s *= op.spec.stride[1];
  return s;
}

void Layer::add_conv(Conv c, const std::string& module, bool on_path) {
  parameters.push_back({module + ".weight", c.weight_shape()});
  if (c.bias) parameters.push_back({module + ".bias", {c.out_channels}});
  if (on_path && (c.spec.kernel[1] > 1 || c.spec.stride[1] > 1)) {
    if (!across_w) across_w = convs.size();
    path.push_back({module, c.spec});
  }
  convs.push_back(std::move(c));
}

void Layer::add_norm(Norm n, const std::string& module) {
  parameters.push_back({module + ".weight", {n.channels}});
  parameters.push_back({module + ".bias", {n.channels}});
  norms.push_back(std::move(n));
}

int64_t Layer::parameter_count() const {
  int64_t n = 0;
  for (const Parameter& p : parameters) n += p.numel();
  return n;
}

}  // namespace halo::arch
