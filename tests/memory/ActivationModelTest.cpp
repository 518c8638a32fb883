// The predicted saved bytes of single layers equal what the counting allocator sees after
// their forward (fp32 and bf16 autocast, with and without drop path, both MLP styles), and
// a whole forward + backward peaks where the step simulation says.
#include <gtest/gtest.h>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "arch/ConvNeXtLayers.h"
#include "memory/MemoryPlanner.h"
#include "memory/StepSimulator.h"
#include "model/ConvNeXt.h"
#include "parallel/Communicator.h"
#include "train/MemoryTracker.h"

namespace halo::memory {
namespace {

using parallel::ShardedTensor;
using train::MemoryTracker;

const int64_t kB = 2, kH = 64, kW = 128;

arch::ConvNeXtVariant variant(bool conv_mlp) {
  auto v = *arch::find_convnext_variant("convnext_test");  // dims 8, 16, 24, 32
  v.conv_mlp = conv_mlp;
  return v;
}

const LayerMemory& layer(const std::vector<LayerMemory>& layers, const std::string& name) {
  for (const auto& l : layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

std::vector<LayerMemory> predicted(bool conv_mlp, int bytes, bool drop_path) {
  ActivationInput in;
  in.layers = arch::convnext_layers(variant(conv_mlp), 10);
  in.images = kB;
  in.height = kH;
  in.width = kW;
  in.compute_bytes = bytes;
  in.drop_path = drop_path;
  return activation_layers(in);
}

// Bytes still allocated after `f` ran forward (output and autocast cache excluded).
struct Seen {
  int64_t saved = 0, out = 0;
};
template <class F>
Seen run_forward(bool bf16, F f) {
  at::autocast::set_autocast_enabled(at::kCPU, bf16);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  const int64_t before = MemoryTracker::cpu().current;
  at::Tensor y = f();
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  const int64_t after = MemoryTracker::cpu().current;
  return {after - before - static_cast<int64_t>(y.nbytes()), static_cast<int64_t>(y.nbytes())};
}

ShardedTensor input(int64_t c, int64_t h, int64_t w, at::ScalarType dt) {
  return {torch::randn({kB, c, h, w}).to(dt).requires_grad_(), shard::even_partition(w, 1),
          parallel::Communicator::solo()};
}

class SingleLayer : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  void SetUp() override { MemoryTracker::install(); }
  bool bf16() const { return std::get<0>(GetParam()); }
  bool conv_mlp() const { return std::get<1>(GetParam()); }
};

TEST_P(SingleLayer, BlockSavesWhatThePlannerPredicts) {
  torch::manual_seed(0);
  for (const bool drop : {false, true}) {
    const auto layers = predicted(conv_mlp(), bf16() ? 2 : 4, drop);
    // stages.2.blocks.0 takes the downsample's output (bf16 under autocast), blocks.1 the fp32 stream.
    for (const char* name : {"stages.2.blocks.0", "stages.2.blocks.1"}) {
      const LayerMemory& l = layer(layers, name);
      model::ConvNeXtBlock block(24, conv_mlp(), 1e-6, 1e-6, drop ? 0.3 : 0.0);
      block->train();
      const bool half_in = bf16() && std::string(name).ends_with("0");
      ShardedTensor x = input(24, l.height, l.columns, half_in ? at::kBFloat16 : at::kFloat);
      const Seen seen = run_forward(bf16(), [&] { return block->forward(x).local; });
      EXPECT_EQ(seen.saved, l.saved) << name << (drop ? " with drop path" : "");
      EXPECT_EQ(seen.out, l.out) << name;
      EXPECT_EQ(static_cast<int64_t>(x.local.nbytes()), l.in) << name;
    }
  }
}

TEST_P(SingleLayer, StemAndDownsampleSaveWhatThePlannerPredicts) {
  torch::manual_seed(0);
  const auto layers = predicted(conv_mlp(), bf16() ? 2 : 4, false);
  const auto v = variant(conv_mlp());
  model::ConvNeXt net(v, 10);
  {
    const LayerMemory& l = layer(layers, "stem");
    ShardedTensor img{torch::randn({kB, 3, kH, kW}), shard::even_partition(kW, 1), parallel::Communicator::solo()};
    const Seen seen = run_forward(bf16(), [&] {
      ShardedTensor y = net->stem->at<model::ShardedConv2dImpl>(0).forward(img);
      return net->stem->at<model::LayerNorm2dImpl>(1).forward(y.local);
    });
    EXPECT_EQ(seen.saved, l.saved) << "stem";
    EXPECT_EQ(seen.out, l.out) << "stem";
  }
  for (int stage = 1; stage < 4; ++stage) {
    const LayerMemory& l = layer(layers, "stages." + std::to_string(stage) + ".downsample");
    auto& st = net->stages->at<model::ConvNeXtStageImpl>(static_cast<size_t>(stage));
    const int64_t h = l.height * 2, w = l.columns * 2;
    ShardedTensor x = input(v.dims[static_cast<size_t>(stage - 1)], h, w, at::kFloat);
    const Seen seen = run_forward(bf16(), [&] {
      ShardedTensor y = x.with(st.downsample->at<model::LayerNorm2dImpl>(0).forward(x.local));
      return st.downsample->at<model::ShardedConv2dImpl>(1).forward(y).local;
    });
    EXPECT_EQ(seen.saved, l.saved) << l.name;
    EXPECT_EQ(seen.out, l.out) << l.name;
  }
}

INSTANTIATE_TEST_SUITE_P(PrecisionAndMlp, SingleLayer,
                         ::testing::Combine(::testing::Values(false, true), ::testing::Values(false, true)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "bf16" : "fp32") +
                                  (std::get<1>(info.param) ? "_conv_mlp" : "_linear_mlp");
                         });

// One forward + backward of the whole model (weights and gradients allocated beforehand):
// the measured peak above the starting level against the simulated step, per checkpointing.
TEST(WholeStep, PeakMatchesTheSimulation) {
  MemoryTracker::install();
  torch::manual_seed(0);
  const auto v = *arch::find_convnext_variant("convnext_test");
  ActivationInput in;
  in.layers = arch::convnext_layers(v, 10);
  in.images = 4;
  in.height = 64;
  in.width = 256;
  const auto layers = activation_layers(in);
  for (const std::string level : {"none", "block", "stage"}) {
    model::ConvNeXt net(v, 10);
    if (level != "none")
      net->set_checkpoint(level == "block" ? model::CheckpointLevel::Block : model::CheckpointLevel::Stage);
    auto step = [&] {
      at::Tensor images = torch::randn({in.images, 3, in.height, in.width});
      ShardedTensor x{images, shard::even_partition(in.width, 1), parallel::Communicator::solo()};
      at::Tensor loss = torch::cross_entropy_loss(net->forward(x), torch::zeros({in.images}, torch::kLong));
      loss.backward();
    };
    step();  // gradients now exist, as in every step after the first
    const int64_t start = MemoryTracker::cpu().current;
    MemoryTracker::reset_peak();
    step();
    const double measured = static_cast<double>(MemoryTracker::cpu().peak - start);
    const StepPeak p =
        simulate_step(layers,
                      checkpoint_segments(
                          layers, level == "none" ? std::nullopt : config::from_string<config::CheckpointLevel>(level)),
                      in.images * 3 * in.height * in.width * 4);
    EXPECT_NEAR(static_cast<double>(p.peak) / measured, 1.0, 0.05)
        << level << ": predicted " << p.peak << " at " << p.where << ", measured " << measured;
  }
}

TEST(ParameterCount, MatchesTheModel) {
  for (const char* name : {"convnext_test", "convnext_atto", "convnext_tiny"}) {
    const auto v = *arch::find_convnext_variant(name);
    model::ConvNeXt net(v, 10);
    int64_t n = 0;
    for (const auto& p : net->parameters()) n += p.numel();
    EXPECT_EQ(parameter_count(v, 10), n) << name;
  }
}

}  // namespace
}  // namespace halo::memory
