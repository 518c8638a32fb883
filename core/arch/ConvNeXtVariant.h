// The ConvNeXt family as a data table (timm's depths, dims and MLP style), plus a tiny
// variant for tests; a row's layers come from arch/ConvNeXtLayers.h. Unknown name: nullopt.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace halo::arch {

struct ConvNeXtVariant {
  std::string name;
  std::array<int, 4> depths;
  std::array<int, 4> dims;
  bool conv_mlp = false;  // 1x1 conv MLP + LayerNorm2d (atto..nano) vs Linear on NHWC
  double norm_eps = 1e-6;
};

const std::vector<ConvNeXtVariant>& convnext_variants();
std::optional<ConvNeXtVariant> find_convnext_variant(const std::string& name);
std::string convnext_variant_names();  // "convnext_atto, convnext_femto, ..."

}  // namespace halo::arch
