// ZeRO (parallel.shard_state) against the replicated run: on a dp=2 x sp=2 mesh of real ranks,
// every optimizer, clipping, accumulation and precision gives the same losses and gradient
// norms over 5 steps, under each ZeRO stage; checkpoints resume across shard_state and sp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/Enums.h"
#include "memory/MemoryPlanner.h"
#include "parallel/Mesh.h"
#include "support/RankHarness.h"
#include "train/MemoryTracker.h"
#include "train/Trainer.h"

namespace halo::train {
namespace {

using config::ShardState;

const std::vector<ShardState> kStates{ShardState::None, ShardState::Optimizer, ShardState::Gradients,
                                      ShardState::Weights};

config::ExperimentConfig tiny(int dp, int sp) {
  config::ExperimentConfig c;
  c.model.arch = "convnext_test";
  c.model.num_classes = 5;
  c.data.views = 2;
  c.data.height = 32;
  c.data.width = 64;
  c.data.batch = 2;
  c.parallel.dp = dp;
  c.parallel.sp = sp;
  c.parallel.strategy = sp > 1 ? config::Strategy::Tp : config::Strategy::None;
  c.optim.lr = 3e-3;
  c.optim.grad_clip = 0;
  c.schedule.steps = 5;
  c.schedule.warmup_steps = 1;
  c.train.seed = 7;
  return c;
}

// One combination the test runs three times (shard_state none, optimizer, gradients).
struct Combo {
  std::string name;
  config::OptimizerKind optim = config::OptimizerKind::AdamW;
  double clip = 0;
  int accumulation = 1;
  config::Precision precision = config::Precision::Fp32;
  config::Strategy strategy = config::Strategy::Tp;
};

std::vector<Combo> combos() {
  using config::OptimizerKind;
  return {{"adamw"},
          {"sgd", OptimizerKind::Sgd},
          {"lamb", OptimizerKind::Lamb},
          {"adamw clip 0.05 accumulation 2", OptimizerKind::AdamW, 0.05, 2},
          {"sgd clip 0.05 tp+checkpoint", OptimizerKind::Sgd, 0.05, 1, config::Precision::Fp32,
           config::Strategy::TpCheckpoint},
          {"adamw bf16", OptimizerKind::AdamW, 0, 1, config::Precision::Bf16},
          {"lamb fp16 (loss scaler)", OptimizerKind::Lamb, 0.5, 1, config::Precision::Fp16}};
}

config::ExperimentConfig configured(const Combo& c, ShardState s, int dp, int sp) {
  config::ExperimentConfig cfg = tiny(dp, sp);
  cfg.optim.name = c.optim;
  cfg.optim.grad_clip = c.clip;
  cfg.train.accumulation = c.accumulation;
  cfg.train.precision = c.precision;
  cfg.parallel.strategy = c.strategy;
  cfg.parallel.shard_state = s;
  return cfg;
}

// Losses, gradient norms and memory of each step: [[loss, grad_norm, peak, start], ...] (bytes).: [[loss, grad_norm,
// peak bytes], ...].
nlohmann::json train(const config::ExperimentConfig& cfg, std::shared_ptr<parallel::Mesh> mesh, int steps,
                     const std::string& load = "", const std::string& save = "") {
  Trainer t(cfg, std::move(mesh));
  if (!load.empty()) t.load_checkpoint(load);
  nlohmann::json out = nlohmann::json::array();
  for (int i = 0; i < steps; ++i) {
    const StepResult r = t.step();
    out.push_back({r.losses.at("loss"), r.grad_norm, r.memory.peak, r.memory_at_start});
  }
  if (!save.empty()) t.save_checkpoint(save);
  return out;
}

double relative(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-12); }

// Largest relative difference of `got` to `want` over every step's loss and gradient norm.
double worst_difference(const nlohmann::json& got, const nlohmann::json& want) {
  EXPECT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t s = 0; s < std::min(got.size(), want.size()); ++s)
    for (size_t k = 0; k < 2; ++k) {
      // A step the fp16 loss scaler skips has an infinite norm (JSON null): skipped in both.
      EXPECT_EQ(got[s][k].is_null(), want[s][k].is_null()) << "step " << s;
      if (!got[s][k].is_null() && !want[s][k].is_null()) worst = std::max(worst, relative(got[s][k], want[s][k]));
    }
  return worst;
}

// The planner against the counting allocator, on world rank r: the state held from step to
// step exactly (weights, gradients, optimizer moments, or ZeRO's flat buckets and chunks), for
// every combination. The peak's change from shard_state none is printed beside the predicted
// one: at this toy size the layer rules themselves are off by up to 1.5 MiB of CPU kernel
// scratch they do not model (memory_tests checks them at real sizes), which ZeRO's gradients
// stage, by moving the peak, turns into tens of KiB of error in the change.
void expect_planned_memory(const Combo& c, const nlohmann::json& runs, int r, int dp, int sp) {
  auto measured_peak = [&](ShardState s) {
    double m = 0;
    for (size_t step = 1; step < runs[config::name_of(s)].size(); ++step)
      m = std::max(m, runs[config::name_of(s)][step][2].get<double>());
    return m;
  };
  auto predicted = [&](ShardState s) { return memory::predict(configured(c, s, dp, sp)).ranks.at(r % sp); };
  const memory::RankPrediction none = predicted(ShardState::None);
  for (ShardState s : kStates) {
    const memory::RankPrediction p = predicted(s);
    // The least live at a step's start over steps 2..5: the held state (a step may start while
    // a collective's buffer from the last is still on its way out on a loaded machine).
    double start = runs[config::name_of(s)][1][3];
    for (size_t step = 2; step < runs[config::name_of(s)].size(); ++step)
      start = std::min(start, runs[config::name_of(s)][step][3].get<double>());
    const double want_start = p.weights + p.gradients + p.optimizer_state;
    EXPECT_NEAR(start, want_start, 64 << 10) << c.name << " " << config::name_of(s) << " rank " << r;
    const double change = measured_peak(s) - measured_peak(ShardState::None);
    const double want_change = static_cast<double>(p.peak - none.peak);
    if (r == 0)
      std::printf("%-34s %-10s held %7.1f KiB (predicted %7.1f), peak %+7.1f KiB from none (predicted %+7.1f)\n",
                  c.name.c_str(), config::name_of(s).c_str(), start / 1024, want_start / 1024, change / 1024,
                  want_change / 1024);
  }
}

TEST(ShardedTraining, EveryCombinationMatchesTheReplicatedRun) {
  const int dp = 2, sp = 2;
  testing::RankHarness h(dp * sp);
  const std::vector<Combo> all = combos();
  if (h.is_rank()) {
    MemoryTracker::install();
    auto mesh = h.join({dp, sp});
    nlohmann::json out;
    for (const Combo& c : all)
      for (ShardState s : kStates) out[c.name][config::name_of(s)] = train(configured(c, s, dp, sp), mesh, 5);
    std::ofstream(fmt::format("{}/rank-{}.json", h.dir(), h.rank())) << out.dump();
    return;
  }
  h.run_ranks();
  for (int r = 0; r < dp * sp; ++r) {
    const nlohmann::json got = nlohmann::json::parse(std::ifstream(fmt::format("{}/rank-{}.json", h.dir(), r)));
    for (const Combo& c : all) {
      const nlohmann::json& want = got[c.name]["none"];
      // The run moves: a check that compares a run with itself would pass unchanged weights too.
      EXPECT_GT(relative(want[4][0], want[0][0]), 1e-4) << c.name;
      for (ShardState s : kStates) {
        if (s == ShardState::None) continue;  // the reference
        const double worst = worst_difference(got[c.name][config::name_of(s)], want);
        EXPECT_LE(worst, 1e-5) << c.name << " shard_state " << config::name_of(s) << " rank " << r;
        if (r == 0)
          std::printf("%-34s %-10s largest relative difference to none over 5 steps: %.2g\n", c.name.c_str(),
                      config::name_of(s).c_str(), worst);
      }
      expect_planned_memory(c, got[c.name], r, dp, sp);
    }
  }
}

// Saved under one layout, resumed under another: the same losses as the uninterrupted run.
class ShardedResume : public ::testing::TestWithParam<ShardState> {};

TEST_P(ShardedResume, CheckpointsResumeAcrossShardStateAndSp) {
  testing::RankHarness h(2);
  const std::string solo_ckpt = h.dir() + "/solo.pt", sharded_ckpt = h.dir() + "/sharded.pt";
  config::ExperimentConfig zero = tiny(1, 2);
  zero.parallel.shard_state = GetParam();
  const std::string what = "shard_state " + config::name_of(GetParam());
  if (h.is_rank()) {
    auto mesh = h.join({1, 2});
    const nlohmann::json resumed = train(zero, mesh, 3, solo_ckpt);  // steps 2..4 from the solo run's step 2
    train(zero, mesh, 2, "", sharded_ckpt);                          // steps 0..1, saved
    std::ofstream(fmt::format("{}/rank-{}.json", h.dir(), h.rank())) << resumed.dump();
    return;
  }
  const config::ExperimentConfig solo = tiny(1, 1);
  const nlohmann::json whole = train(solo, parallel::Mesh::solo(), 5);
  train(solo, parallel::Mesh::solo(), 2, "", solo_ckpt);
  h.run_ranks();
  const nlohmann::json tail(whole.begin() + 2, whole.end());
  for (int r = 0; r < 2; ++r) {
    const nlohmann::json got = nlohmann::json::parse(std::ifstream(fmt::format("{}/rank-{}.json", h.dir(), r)));
    EXPECT_LE(worst_difference(got, tail), 1e-5) << "solo checkpoint resumed at sp=2 with " << what;
  }
  const nlohmann::json back = train(solo, parallel::Mesh::solo(), 3, sharded_ckpt);
  EXPECT_LE(worst_difference(back, tail), 1e-5) << "sp=2 " << what << " checkpoint resumed in one process";
}

INSTANTIATE_TEST_SUITE_P(ShardedTraining, ShardedResume, ::testing::Values(ShardState::Gradients, ShardState::Weights),
                         [](const auto& info) { return config::name_of(info.param); });

}  // namespace
}  // namespace halo::train
