// The ResNet family as a data table (timm's resnet.py: depths, basic or bottleneck blocks),
// plus tiny variants for tests; a row's layers come from arch/ResNetLayers.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace halo::arch {

struct ResNetVariant {
  std::string name;
  std::array<int, 4> depths;
  bool bottleneck = false;                           // Bottleneck (expansion 4) or BasicBlock
  int64_t stem_width = 64;                           // conv1's output channels
  std::array<int64_t, 4> widths{64, 128, 256, 512};  // planes per stage (a bottleneck outputs 4x)
};

const std::vector<ResNetVariant>& resnet_variants();
std::optional<ResNetVariant> find_resnet_variant(const std::string& name);

}  // namespace halo::arch
