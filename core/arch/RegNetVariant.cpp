// Variant table, values as timm's regnet.py (timm 1.0) resolves them: regnety_008 is
// RegNetCfg(w0=56, wa=38.84, wm=2.4, group_size=16, depth=14), regnety_032 is (80, 42.63,
// 2.66, 24, 21). regnet_test is Halo's own toy width for exact tests.
#include "arch/RegNetVariant.h"

namespace halo::arch {

const std::vector<RegNetVariant>& regnet_variants() {
  static const std::vector<RegNetVariant> table{
      {"regnet_test", {1, 1, 1, 1}, {8, 16, 24, 32}, 4, 8},
      {"regnety_008", {1, 3, 8, 2}, {64, 128, 320, 768}, 16},
      {"regnety_032", {2, 5, 13, 1}, {72, 216, 576, 1512}, 24},
  };
  return table;
}

std::optional<RegNetVariant> find_regnet_variant(const std::string& name) {
  for (const auto& v : regnet_variants())
    if (v.name == name) return v;
  return std::nullopt;
}

}  // namespace halo::arch
