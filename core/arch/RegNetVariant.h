// The RegNetY family as a data table: per stage the depth, width and group width that timm's
// generate_regnet resolves from (w0, wa, wm, depth, group_size), SE ratio 0.25, plus a tiny
// variant for tests; a row's layers come from arch/RegNetLayers.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace halo::arch {

struct RegNetVariant {
  std::string name;
  std::array<int, 4> depths;
  std::array<int64_t, 4> widths;  // output channels of each stage's blocks (bottle ratio 1)
  int64_t group_width = 16;       // channels per group of the 3x3 conv
  int64_t stem_width = 32;        // the 3x3/2 stem conv's output channels
  double se_ratio = 0.25;         // SE width: round(block input channels x ratio)
};

const std::vector<RegNetVariant>& regnet_variants();
std::optional<RegNetVariant> find_regnet_variant(const std::string& name);

}  // namespace halo::arch
