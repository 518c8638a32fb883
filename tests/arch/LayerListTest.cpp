// The ConvNeXt layer list of every variant: order and names as timm's modules, channels
// chained layer to layer, and parameter counts, tensor counts and the largest tensor as timm.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "arch/ConvNeXtLayers.h"
#include "util/Error.h"

namespace halo::arch {
namespace {

// What timm 1.0.31 (the .venv's) reports with 1000 classes, from:
//   .venv/bin/python -c "import timm
//   for n in ['convnext_atto', ...]:
//       ps = list(timm.create_model(n).named_parameters()); big = max(ps, key=lambda kv: kv[1].numel())
//       print(n, sum(p.numel() for _, p in ps), len(ps), big[0], big[1].numel())"
struct TimmFigures {
  int64_t parameters;
  size_t tensors;
  const char* largest;
  int64_t largest_numel;
};
const std::map<std::string, TimmFigures>& timm_figures() {
  static const std::map<std::string, TimmFigures> m{
      {"convnext_atto", {3695520, 128, "stages.3.blocks.0.mlp.fc1.weight", 409600}},
      {"convnext_femto", {5217784, 128, "stages.3.blocks.0.mlp.fc1.weight", 589824}},
      {"convnext_pico", {9045672, 128, "stages.3.blocks.0.mlp.fc1.weight", 1048576}},
      {"convnext_nano", {15593560, 146, "stages.3.blocks.0.mlp.fc1.weight", 1638400}},
      {"convnext_tiny", {28589128, 182, "stages.3.blocks.0.mlp.fc1.weight", 2359296}},
      {"convnext_small", {50223688, 344, "stages.3.blocks.0.mlp.fc1.weight", 2359296}},
      {"convnext_base", {88591464, 344, "stages.3.blocks.0.mlp.fc1.weight", 4194304}},
      {"convnext_large", {197767336, 344, "stages.3.blocks.0.mlp.fc1.weight", 9437184}},
      {"convnext_xlarge", {350196968, 344, "stages.3.blocks.0.mlp.fc1.weight", 16777216}},
      {"convnext_xxlarge", {846471016, 380, "stages.3.blocks.0.mlp.fc1.weight", 37748736}},
  };
  return m;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> out;
  for (const auto& v : convnext_variants()) out.push_back(v.name);
  return out;
}

class EveryVariant : public ::testing::TestWithParam<std::string> {
 protected:
  ConvNeXtVariant variant() const { return *find_convnext_variant(GetParam()); }
};

TEST_P(EveryVariant, CountsMatchTimm) {
  if (GetParam() == "convnext_test") {
    // Halo's own toy row has no timm counterpart; its count is checked against the model in tests/model.
    EXPECT_FALSE(timm_figures().contains(GetParam()));
    return;
  }
  ASSERT_TRUE(timm_figures().contains(GetParam())) << "a new row needs its timm figures here";
  const TimmFigures& t = timm_figures().at(GetParam());
  const LayerList layers = convnext_layers(variant(), 1000);
  EXPECT_EQ(layers.parameter_count(), t.parameters);
  EXPECT_EQ(layers.parameters().size(), t.tensors);
  EXPECT_EQ(layers.largest_parameter().name, t.largest);
  EXPECT_EQ(layers.largest_parameter().numel(), t.largest_numel);
}

TEST_P(EveryVariant, LayersFollowTimmsModules) {
  const ConvNeXtVariant v = variant();
  const LayerList layers = convnext_layers(v, 1000);
  ASSERT_EQ(layers.size(), static_cast<size_t>(1 + 3 + v.depths[0] + v.depths[1] + v.depths[2] + v.depths[3] + 1));
  EXPECT_EQ(layers[0].name, "stem");
  EXPECT_EQ(layers[0].kind, LayerKind::PatchStem);
  EXPECT_EQ(layers[layers.size() - 1].name, "head");
  EXPECT_EQ(layers[layers.size() - 1].kind, LayerKind::NormMlpHead);
  EXPECT_EQ(layers.stage_count(), 4);
  size_t i = 1;
  for (int s = 0; s < 4; ++s) {
    const std::string stage = "stages." + std::to_string(s);
    if (s > 0) {
      EXPECT_EQ(layers[i].name, stage + ".downsample");
      EXPECT_EQ(layers[i].kind, LayerKind::NormConvDownsample);
      EXPECT_EQ(layers[i].stage, s);
      ++i;
    }
    for (int j = 0; j < v.depths[static_cast<size_t>(s)]; ++j, ++i) {
      EXPECT_EQ(layers[i].name, stage + ".blocks." + std::to_string(j));
      EXPECT_EQ(layers[i].kind, LayerKind::ConvNeXtBlock);
      EXPECT_EQ(layers[i].stage, s);
      EXPECT_EQ(layers[i].block, j);
      EXPECT_EQ(layers[i].out_channels, v.dims[static_cast<size_t>(s)]);
      EXPECT_EQ(layers[i].hidden, 4 * layers[i].out_channels);
    }
  }
  // Channels chain; every parameter name starts with its layer's name and is unique.
  std::set<std::string> names;
  for (size_t k = 0; k < layers.size(); ++k) {
    if (k > 0) {
      EXPECT_EQ(layers[k].in_channels, layers[k - 1].out_channels) << layers[k].name;
    }
    for (const Parameter& p : layers[k].parameters) {
      EXPECT_EQ(p.name.rfind(layers[k].name + ".", 0), 0u) << p.name;
      EXPECT_TRUE(names.insert(p.name).second) << p.name;
    }
  }
  EXPECT_EQ(layers[0].in_channels, 3);
  EXPECT_EQ(layers[layers.size() - 1].out_channels, 1000);
}

TEST_P(EveryVariant, WindowsAreTheConvsThatReadAcrossW) {
  const ConvNeXtVariant v = variant();
  const LayerList layers = convnext_layers(v, 10);
  const auto windows = layers.windows();
  ASSERT_EQ(windows.size(), layers.size() - 1);  // all but the head
  EXPECT_EQ(windows.front().name, "stem.0");
  int64_t stride = 1;
  for (const auto& w : windows) {
    stride *= w.window.stride;
    EXPECT_TRUE(w.window.kernel > 1 || w.window.stride > 1) << w.name;
  }
  EXPECT_EQ(stride, 32);
  EXPECT_EQ(windows[1].name, "stages.0.blocks.0.conv_dw");
  EXPECT_EQ(windows[1].window.kernel, 7);
  EXPECT_EQ(windows[1].window.padding, 3);
  EXPECT_EQ(windows[static_cast<size_t>(1 + v.depths[0])].name, "stages.1.downsample.1");
  // The depthwise conv is grouped per channel: one 7x7 filter per channel.
  const Conv& dw = layers[1].conv("conv_dw");
  EXPECT_EQ(dw.spec.groups, dw.in_channels);
  EXPECT_EQ(dw.weight_shape(), (std::vector<int64_t>{v.dims[0], 1, 7, 7}));
}

TEST_P(EveryVariant, MlpStyleDecidesTheFcShapes) {
  const ConvNeXtVariant v = variant();
  const LayerList layers = convnext_layers(v);  // keep the list alive: block refers into it
  const Layer& block = layers[1];
  const int64_t d = v.dims[0];
  const std::vector<int64_t> fc1 = v.conv_mlp ? std::vector<int64_t>{4 * d, d, 1, 1} : std::vector<int64_t>{4 * d, d};
  EXPECT_EQ(block.conv("mlp.fc1").weight_shape(), fc1);
  EXPECT_EQ(block.conv("mlp.fc1").linear, !v.conv_mlp);
  EXPECT_THROW(block.conv("mlp.fc3"), util::Error);
  EXPECT_THROW(block.norm("missing"), util::Error);
}

INSTANTIATE_TEST_SUITE_P(Variants, EveryVariant, ::testing::ValuesIn(variant_names()),
                         [](const auto& info) { return info.param; });

TEST(LayerList, NoClassesMeansNoHead) {
  const ConvNeXtVariant v = *find_convnext_variant("convnext_tiny");
  const LayerList backbone = convnext_layers(v, 0);
  const LayerList full = convnext_layers(v, 1000);
  EXPECT_EQ(backbone.size() + 1, full.size());
  EXPECT_NE(backbone[backbone.size() - 1].kind, LayerKind::NormMlpHead);
  EXPECT_EQ(full.parameter_count() - backbone.parameter_count(), 2 * 768 + 768 * 1000 + 1000);
  EXPECT_THROW(LayerList().largest_parameter(), util::Error);
}

TEST(LayerList, InputChannelsReachOnlyTheStem) {
  const ConvNeXtVariant v = *find_convnext_variant("convnext_test");
  const LayerList rgb = convnext_layers(v, 10, 3), one = convnext_layers(v, 10, 1);
  EXPECT_EQ(rgb.parameter_count() - one.parameter_count(), 2 * v.dims[0] * 4 * 4);
  EXPECT_EQ(one[0].conv("0").weight_shape(), (std::vector<int64_t>{v.dims[0], 1, 4, 4}));
}

}  // namespace
}  // namespace halo::arch
