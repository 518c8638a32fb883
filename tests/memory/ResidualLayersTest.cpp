// The planner's model of ResNet and RegNetY layers against the counting allocator: on 1, 2
// and 4 real ranks, the live bytes after every layer's forward equal the prediction, and the
// step's peak is within 5 % of the simulated one (no, block and stage checkpointing).
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include <fmt/format.h>
#include <torch/torch.h>

#include "arch/Backbones.h"
#include "memory/ActivationModel.h"
#include "memory/LayerTape.h"
#include "memory/StepSimulator.h"
#include "model/Backbone.h"
#include "model/LayerProbe.h"
#include "support/RankHarness.h"
#include "train/MemoryTracker.h"

namespace halo::memory {
namespace {

using model::LayerProbe;
using train::MemoryTracker;

const int64_t kResImages = 4, kResHeight = 64, kResWidth = 256;

ActivationInput residual_input(const std::string& arch, int sp, int rank) {
  ActivationInput in;
  in.layers = *arch::backbone_layers(arch, 10);
  in.images = kResImages;
  in.height = kResHeight;
  in.width = kResWidth;
  in.sp = sp;
  in.rank = rank;
  return in;
}

std::optional<config::CheckpointLevel> level_of(const std::string& name) {
  return name == "none" ? std::nullopt : config::from_string<config::CheckpointLevel>(name);
}

// One rank: two steps of the backbone on its stripes, the second probed; "where high after" lines.
void run_residual_rank(const std::string& arch, const std::string& checkpoint, int sp, const testing::RankHarness& h) {
  MemoryTracker::install();
  at::set_num_threads(1);
  torch::manual_seed(0);
  auto mesh = h.join({1, sp});
  std::shared_ptr<model::BackboneImpl> net = model::make_backbone(arch, 10);
  if (const auto level = level_of(checkpoint))
    net->set_checkpoint(*level == config::CheckpointLevel::Block ? model::CheckpointLevel::Block
                                                                 : model::CheckpointLevel::Stage);
  auto step = [&](LayerProbe* probe) {
    at::Tensor loss;
    {  // as the trainer's task: the images and the stripe go when forward returns
      at::Tensor images = torch::randn({kResImages, 3, kResHeight, kResWidth});
      parallel::ShardedTensor x = parallel::shard_evenly(images, mesh->sp_ptr());
      loss = torch::cross_entropy_loss(net->forward(x), torch::zeros({kResImages}, torch::kLong));
    }
    if (probe) probe->begin_backward();
    loss.backward();
    if (probe) probe->end_backward();
  };
  step(nullptr);
  const int64_t start = MemoryTracker::cpu().current;
  LayerProbe probe([] { return LayerProbe::Reading{MemoryTracker::cpu().current, MemoryTracker::take_window_high()}; });
  step(&probe);
  std::ofstream out(fmt::format("{}/r{}.txt", h.dir(), h.rank()));
  for (const auto& p : probe.points()) out << p.where << "\t" << p.high - start << "\t" << p.after - start << "\n";
}

class ResidualTimeline : public ::testing::TestWithParam<std::tuple<std::string, int, std::string>> {};

TEST_P(ResidualTimeline, EveryLayerKeepsWhatThePlannerPredicts) {
  const auto [arch, sp, checkpoint] = GetParam();
  testing::RankHarness h(sp);
  if (h.is_rank()) return run_residual_rank(arch, checkpoint, sp, h);
  h.run_ranks();
  if (::testing::Test::HasFatalFailure()) return;
  for (int r = 0; r < sp; ++r) {
    const ActivationInput in = residual_input(arch, sp, r);
    const std::vector<LayerMemory> layers = activation_layers(in);
    std::vector<TracePoint> trace;
    // The whole images and, on several ranks, this rank's stripe copy, until forward returns.
    const StepPeak peak =
        simulate_step(layers, checkpoint_segments(layers, level_of(checkpoint)),
                      kResImages * 3 * kResHeight * kResWidth * 4 + (sp > 1 ? layers.front().in : 0), &trace);
    std::map<std::string, TracePoint> predicted;
    for (const TracePoint& t : trace) predicted.emplace(t.where, t);
    std::ifstream file(fmt::format("{}/r{}.txt", h.dir(), r));
    std::string line;
    int64_t measured_peak = 0;
    int forwards = 0;
    while (std::getline(file, line)) {
      const auto tab = line.find('\t'), tab2 = line.rfind('\t');
      const std::string where = line.substr(0, tab);
      const int64_t high = std::stoll(line.substr(tab + 1, tab2 - tab - 1)), after = std::stoll(line.substr(tab2 + 1));
      measured_peak = std::max(measured_peak, high);
      const auto it = predicted.find(where);
      if (checkpoint == "none" && where.starts_with("forward of ") && it != predicted.end()) {
        // What each layer keeps, to 4 KiB (small (B, C) tensors of the pooled head aside).
        EXPECT_NEAR(static_cast<double>(after), static_cast<double>(it->second.after), 4096.0)
            << arch << " sp " << sp << " rank " << r << ": " << where;
        ++forwards;
      }
    }
    if (checkpoint == "none") {
      EXPECT_EQ(forwards, static_cast<int>(layers.size())) << arch << " rank " << r;
    }
    EXPECT_NEAR(static_cast<double>(measured_peak) / static_cast<double>(peak.peak), 1.0, 0.05)
        << arch << " sp " << sp << " rank " << r << " " << checkpoint << ": predicted " << peak.peak << " at "
        << peak.where << ", measured " << measured_peak;
  }
}

INSTANTIATE_TEST_SUITE_P(FamiliesRanksCheckpointing, ResidualTimeline,
                         ::testing::Combine(::testing::Values("resnet_test", "resnet_test_bottleneck", "regnet_test"),
                                            ::testing::Values(1, 2, 4), ::testing::Values("none", "block", "stage")),
                         [](const auto& info) {
                           return fmt::format("{}_sp{}_{}", std::get<0>(info.param), std::get<1>(info.param),
                                              std::get<2>(info.param));
                         });

// The tape's bookkeeping on a hand-made layer: y = relu(a(x) + x), a keeping its input.
TEST(LayerTape, ReplaysForwardAndBackwardAsAutogradFrees) {
  LayerTape t(100);
  const auto a = t.op({.name = "a",
                       .reads = {LayerTape::input()},
                       .out = 100,
                       .saves = {LayerTape::input()},
                       .extra = 50,
                       .grad_extra = 7,
                       .params = true});
  const auto sum = t.op({.name = "add", .reads = {a, LayerTape::input()}, .out = 100, .passes_grad = true});
  const auto y = t.op({.name = "relu", .reads = {sum}, .out = 100, .saves_result = true});
  t.drop(a);
  t.drop(sum);
  const LayerTape::Replay r = t.replay(y);
  EXPECT_TRUE(r.saves_input);
  EXPECT_TRUE(r.keeps_output);
  EXPECT_EQ(r.saved, 0);            // a's result and the sum are gone; input and output are not counted here
  EXPECT_EQ(r.forward_extra, 200);  // a's result and the sum beside the output
  EXPECT_EQ(r.nograd_extra, 200);
  EXPECT_EQ(r.in_grad, 100);  // the sum's gradient reaches x twice: the second is added in place
  // Backward starts from x, the output and its gradient (300): ReLU makes the sum's gradient
  // (+100) before the output's goes; a's backward later makes x's (+100, +7) with less live.
  EXPECT_EQ(r.backward_extra, 100);
  // A recomputation's caller holds the output and its gradient: a's backward then peaks.
  EXPECT_EQ(r.recompute_backward_extra, 207);
}

}  // namespace
}  // namespace halo::memory
