// Variant table, values as in timm's convnext.py (timm 1.0). convnext_test is Halo's own
// tiny variant: the same structure at toy width, for fast exact tests.
#include "arch/ConvNeXtVariant.h"

namespace halo::arch {

const std::vector<ConvNeXtVariant>& convnext_variants() {
  static const std::vector<ConvNeXtVariant> table{
      {"convnext_test", {1, 1, 2, 1}, {8, 16, 24, 32}, false, 1e-6},
      {"convnext_atto", {2, 2, 6, 2}, {40, 80, 160, 320}, true, 1e-6},
      {"convnext_femto", {2, 2, 6, 2}, {48, 96, 192, 384}, true, 1e-6},
      {"convnext_pico", {2, 2, 6, 2}, {64, 128, 256, 512}, true, 1e-6},
      {"convnext_nano", {2, 2, 8, 2}, {80, 160, 320, 640}, true, 1e-6},
      {"convnext_tiny", {3, 3, 9, 3}, {96, 192, 384, 768}, false, 1e-6},
      {"convnext_small", {3, 3, 27, 3}, {96, 192, 384, 768}, false, 1e-6},
      {"convnext_base", {3, 3, 27, 3}, {128, 256, 512, 1024}, false, 1e-6},
      {"convnext_large", {3, 3, 27, 3}, {192, 384, 768, 1536}, false, 1e-6},
      {"convnext_xlarge", {3, 3, 27, 3}, {256, 512, 1024, 2048}, false, 1e-6},
      {"convnext_xxlarge", {3, 4, 30, 3}, {384, 768, 1536, 3072}, false, 1e-5},
  };
  return table;
}

std::optional<ConvNeXtVariant> find_convnext_variant(const std::string& name) {
  for (const auto& v : convnext_variants())
    if (v.name == name) return v;
  return std::nullopt;
}

std::string convnext_variant_names() {
  std::string out;
  for (const auto& v : convnext_variants()) out += (out.empty() ? "" : ", ") + v.name;
  return out;
}

}  // namespace halo::arch
