// `halo bench memory --strategies` with ZeRO suffixes: each setup measured in its own ranks
// beside the planner's prediction; a misspelt setup refused before anything runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "RunHelpers.h"
#include "launch/MemoryBench.h"
#include "util/Error.h"

namespace halo::testing {
namespace {

TEST(MemoryBench, ParsesStrategiesWithTheirZeroStage) {
  const auto s = launch::parse_strategy("tp4+checkpoint+zero2");
  EXPECT_EQ(s.strategy, config::Strategy::TpCheckpoint);
  EXPECT_EQ(s.sp, 4);
  EXPECT_EQ(s.shard_state, config::ShardState::Gradients);
  EXPECT_EQ(launch::parse_strategy("tp2+zero1").shard_state, config::ShardState::Optimizer);
  EXPECT_EQ(launch::parse_strategy("checkpoint").strategy, config::Strategy::Checkpoint);
  EXPECT_EQ(launch::parse_strategy("none").shard_state, config::ShardState::None);
  for (const char* bad : {"tp4+zero3", "tp4+zero1+zero2", "tp1", "zero2", "none+checkpoint", "tp4+checkpoint+"})
    EXPECT_THROW(launch::parse_strategy(bad), util::Error) << bad;
}

TEST(MemoryBench, ZeroStagesHoldLessPerRankAsPredicted) {
  const std::string exp = write_experiment(
      fresh_dir("bench-memory"),
      {{"model", {{"arch", "convnext_atto"}}}, {"data", {{"views", 2}, {"height", 32}, {"width", 64}, {"batch", 1}}}});
  const CliResult r = run_halo("bench memory " + exp + " --strategies tp2,tp2+zero1,tp2+zero2 --steps 2 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('[')));
  ASSERT_EQ(j.size(), 6u);  // 3 setups x 2 ranks
  auto total = [&](const char* setup, const char* key) {
    for (const auto& row : j)
      if (row["strategy"] == setup && row["rank"] == 0) return row[key].get<double>();
    ADD_FAILURE() << "no row for " << setup;
    return 0.0;
  };
  // convnext_atto (3.4 M parameters, 12.9 MiB): ZeRO 1 keeps half of AdamW's two moments per
  // rank, a drop of 12.9 MiB, exactly as the planner says; ZeRO 2 drops the gradients outside
  // backward too. The planner's totals: within 2 % for ZeRO 2, within 8 % for the rest (these
  // tiny feature maps are where its per-layer rules are least exact; convnext_tiny: 0.2 %).
  const double MiB = 1 << 20;
  const double drop = total("tp2", "total_peak_bytes") - total("tp2+zero1", "total_peak_bytes");
  EXPECT_GT(drop, 12 * MiB);
  EXPECT_NEAR(drop, total("tp2", "predicted_total_bytes") - total("tp2+zero1", "predicted_total_bytes"), MiB);
  EXPECT_LT(total("tp2+zero2", "total_peak_bytes"), total("tp2+zero1", "total_peak_bytes"));
  auto error = [&](const char* setup) {
    return std::abs(total(setup, "predicted_total_bytes") / total(setup, "total_peak_bytes") - 1);
  };
  EXPECT_LT(error("tp2+zero2"), 0.02);
  for (const char* setup : {"tp2", "tp2+zero1"}) EXPECT_LT(error(setup), 0.08) << setup;
}

TEST(MemoryBench, AnUnknownSetupIsRefusedBeforeAnythingRuns) {
  const std::string exp = write_experiment(fresh_dir("bench-memory-bad"), {{"model", {{"arch", "convnext_atto"}}}});
  const CliResult r = run_halo("bench memory " + exp + " --strategies tp2,tp2+zero9");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("tp2+zero9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+zero2"), std::string::npos) << r.out;  // the fix names the suffixes
  EXPECT_EQ(r.out.find("bench memory: tp2 ("), std::string::npos) << "ran before refusing: " << r.out;
}

}  // namespace
}  // namespace halo::testing
