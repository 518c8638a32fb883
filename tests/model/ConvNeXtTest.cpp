// ConvNeXt structure: timm's parameter names and counts for the variant table, the layer
// list the model is built from, and the layer windows the pre-launch check walks.
#include <gtest/gtest.h>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "model/ConvNeXt.h"
#include "parallel/Communicator.h"

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

// The layer list is what the model builds: every parameter by name, shape and order, and
// each across-W conv is a ShardedConv2d of that name with that spec.
void expect_list_is_model(const arch::ConvNeXtVariant& v, int64_t classes) {
  ConvNeXt m(v, classes);
  const arch::LayerList layers = arch::convnext_layers(v, classes);
  const auto params = m->named_parameters();
  const auto expected = layers.parameters();
  ASSERT_EQ(params.size(), expected.size()) << classes << " classes";
  int64_t n = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(params[i].key(), expected[i].name);
    EXPECT_EQ(params[i].value().sizes().vec(), expected[i].shape) << expected[i].name;
    n += params[i].value().numel();
  }
  EXPECT_EQ(layers.parameter_count(), n);
  const auto modules = m->named_modules();
  for (const auto& w : m->layer_windows()) {
    ASSERT_TRUE(modules.contains(w.name)) << w.name;
    const auto* conv = dynamic_cast<const ShardedConv2dImpl*>(modules[w.name].get());
    ASSERT_NE(conv, nullptr) << w.name;
    const shard::Window along = conv->spec().along_w();
    EXPECT_EQ(along.kernel, w.window.kernel) << w.name;
    EXPECT_EQ(along.stride, w.window.stride) << w.name;
    EXPECT_EQ(along.padding, w.window.padding) << w.name;
    EXPECT_EQ(along.dilation, w.window.dilation) << w.name;
  }
}

// Every variant of the table (xxlarge allocates its 846 M parameters: about 3.5 GB, 1 min).
class EveryVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryVariant, LayerListIsTheModel) { expect_list_is_model(*arch::find_convnext_variant(GetParam()), 1000); }

// Modules initialise in forward order, the head last: under one seed a backbone (no head)
// gets exactly the weights of the classifier's backbone, and a seed reproduces every weight.
TEST(ConvNeXt, InitialisationDrawsInForwardOrder) {
  const auto v = *arch::find_convnext_variant("convnext_test");
  torch::manual_seed(7);
  ConvNeXt classifier(v, 10);
  torch::manual_seed(7);
  ConvNeXt backbone(v, 0);
  torch::manual_seed(7);
  ConvNeXt again(v, 10);
  auto full = classifier->named_parameters();
  auto same = again->named_parameters();
  for (const auto& p : backbone->named_parameters()) {
    ASSERT_TRUE(full.contains(p.key())) << p.key();
    EXPECT_TRUE(torch::equal(p.value(), full[p.key()])) << p.key();
  }
  for (const auto& p : full) EXPECT_TRUE(torch::equal(p.value(), same[p.key()])) << p.key();
  EXPECT_FALSE(torch::equal(full["head.fc.weight"], torch::zeros_like(full["head.fc.weight"])));
}

TEST(ConvNeXt, BackboneLayerListHasNoHead) {
  for (const char* name : {"convnext_test", "convnext_atto", "convnext_tiny"})
    expect_list_is_model(*arch::find_convnext_variant(name), 0);
}

std::vector<std::string> variant_names() {
  std::vector<std::string> out;
  for (const auto& v : arch::convnext_variants()) out.push_back(v.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Variants, EveryVariant, ::testing::ValuesIn(variant_names()),
                         [](const auto& info) { return info.param; });

TEST(ConvNeXt, LayoutIsTheListsShapes) {
  ConvNeXt m(*arch::find_convnext_variant("convnext_test"));
  const auto layout = m->layout(64, 256, 4);
  const auto shapes = arch::layer_shapes(m->layers(), 64, 256, 4);
  ASSERT_EQ(layout.size(), shapes.size());
  for (size_t i = 0; i < layout.size(); ++i) {
    EXPECT_EQ(layout[i].name, shapes[i].name);
    EXPECT_EQ(layout[i].height, shapes[i].height);
    EXPECT_EQ(layout[i].out, shapes[i].out);
  }
  EXPECT_EQ(layout.back().height, 2);
  EXPECT_EQ(layout.back().out.global_width(), 256 / 32);
}

}  // namespace
}  // namespace halo::model

namespace halo::model {
namespace {

// Checkpointed segments recompute under the forward's autocast (the backward runs after the
// trainer's autocast scope has ended): bf16 with checkpointing gives the same loss and
// gradients as bf16 without, and the next forward sees no stale cast weights.
TEST(ConvNeXt, CheckpointRecomputesUnderTheForwardsAutocast) {
  const auto v = *arch::find_convnext_variant("convnext_test");
  torch::manual_seed(1);
  const at::Tensor images = torch::randn({2, 3, 32, 64});
  auto grads_of = [&](CheckpointLevel level) {
    torch::manual_seed(5);
    ConvNeXt net(v, 4);
    net->set_checkpoint(level);
    std::vector<double> losses;
    for (int step = 0; step < 2; ++step) {
      at::Tensor loss;
      {
        at::autocast::set_autocast_enabled(at::kCPU, true);
        at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
        parallel::ShardedTensor x{images, shard::even_partition(64, 1), parallel::Communicator::solo()};
        loss = torch::cross_entropy_loss(net->forward(x).to(at::kFloat), torch::zeros({2}, torch::kLong));
        at::autocast::set_autocast_enabled(at::kCPU, false);
        at::autocast::clear_cache();
      }
      loss.backward();
      losses.push_back(loss.item<double>());
      torch::NoGradGuard no_grad;
      for (auto& p : net->parameters()) p.sub_(p.grad() * 0.1);  // weights change between steps
    }
    std::vector<at::Tensor> g;
    for (const auto& p : net->parameters()) g.push_back(p.grad().clone());
    return std::make_pair(losses, g);
  };
  const auto plain = grads_of(CheckpointLevel::None);
  for (CheckpointLevel level : {CheckpointLevel::Block, CheckpointLevel::Stage}) {
    const auto ckpt = grads_of(level);
    EXPECT_EQ(ckpt.first, plain.first) << to_string(level);
    ASSERT_EQ(ckpt.second.size(), plain.second.size());
    for (size_t i = 0; i < plain.second.size(); ++i)
      EXPECT_TRUE(torch::equal(ckpt.second[i], plain.second[i])) << to_string(level) << " parameter " << i;
  }
}

}  // namespace
}  // namespace halo::model
