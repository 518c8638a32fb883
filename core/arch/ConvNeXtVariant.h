// The ConvNeXt family as a data table (timm's depths, dims and MLP style), plus a tiny
// variant for tests. Lookup by name returns std::nullopt for an unknown name.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "shard/ShardingCheck.h"

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

// Every layer that changes or reads across W, in order (for the pre-launch check).
std::vector<shard::LayerWindow> convnext_layer_windows(const ConvNeXtVariant& v);

}  // namespace halo::arch
