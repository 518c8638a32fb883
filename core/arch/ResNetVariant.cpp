// Variant table, values as in timm's resnet.py (timm 1.0): resnet18/34 basic blocks,
// resnet50/101 bottlenecks. The *_test rows are Halo's own toy widths for exact tests.
#include "arch/ResNetVariant.h"

namespace halo::arch {

const std::vector<ResNetVariant>& resnet_variants() {
  static const std::vector<ResNetVariant> table{
      {"resnet_test", {1, 1, 1, 1}, false, 8, {8, 16, 24, 32}},
      {"resnet_test_bottleneck", {1, 1, 1, 1}, true, 8, {4, 8, 12, 16}},
      {"resnet18", {2, 2, 2, 2}, false},
      {"resnet34", {3, 4, 6, 3}, false},
      {"resnet50", {3, 4, 6, 3}, true},
      {"resnet101", {3, 4, 23, 3}, true},
  };
  return table;
}

std::optional<ResNetVariant> find_resnet_variant(const std::string& name) {
  for (const auto& v : resnet_variants())
    if (v.name == name) return v;
  return std::nullopt;
}

}  // namespace halo::arch
