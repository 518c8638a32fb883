// ConvNeXt structure: timm's parameter names and counts for the variant table, and the
// layer windows the pre-launch check walks.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "model/ConvNeXt.h"

namespace halo::model {
namespace {

int64_t count(const ConvNeXt& m) {
  int64_t n = 0;
  for (const auto& p : m->parameters()) n += p.numel();
  return n;
}

TEST(ConvNeXt, ParameterCountsMatchTimm) {
  // timm.create_model(name).parameters() with 1000 classes (timm 1.0.31).
  EXPECT_EQ(count(ConvNeXt(*arch::find_convnext_variant("convnext_tiny"))), 28589128);
  EXPECT_EQ(count(ConvNeXt(*arch::find_convnext_variant("convnext_atto"))), 3695520);
}

TEST(ConvNeXt, ParameterNamesFollowTimm) {
  ConvNeXt m(*arch::find_convnext_variant("convnext_atto"));
  auto params = m->named_parameters();
  for (const char* key :
       {"stem.0.weight", "stem.1.bias", "stages.0.blocks.0.gamma", "stages.0.blocks.0.conv_dw.weight",
        "stages.0.blocks.1.mlp.fc1.weight", "stages.1.downsample.0.weight", "stages.1.downsample.1.weight",
        "stages.3.blocks.1.mlp.fc2.bias", "head.norm.weight", "head.fc.bias"})
    EXPECT_TRUE(params.contains(key)) << key;
  EXPECT_EQ(params["stages.0.blocks.0.mlp.fc1.weight"].sizes(), (std::vector<int64_t>{160, 40, 1, 1}));
  ConvNeXt tiny(*arch::find_convnext_variant("convnext_tiny"));
  EXPECT_EQ(tiny->named_parameters()["stages.0.blocks.0.mlp.fc1.weight"].sizes(), (std::vector<int64_t>{384, 96}));
}

TEST(ConvNeXt, UnknownVariantIsNullopt) {
  EXPECT_FALSE(arch::find_convnext_variant("convnext_huge").has_value());
  EXPECT_NE(arch::convnext_variant_names().find("convnext_xxlarge"), std::string::npos);
}

TEST(ConvNeXt, LayerWindowsCarryTheStrides) {
  ConvNeXt m(*arch::find_convnext_variant("convnext_test"));
  auto layers = m->layer_windows();
  ASSERT_FALSE(layers.empty());
  EXPECT_EQ(layers.front().name, "stem.0");
  EXPECT_EQ(layers.front().window.stride, 4);
  int64_t total = 1;
  for (const auto& l : layers) total *= l.window.stride;
  EXPECT_EQ(total, 32);
}

}  // namespace
}  // namespace halo::model
