// `halo plan` through the real CLI: the table and its JSON agree on what fits, the
// recommendation fits the budget, and a budget nothing fits in says so.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "RunHelpers.h"

namespace {

using halo::testing::run_halo;

TEST(PlanCli, JsonListsEverySetupAndRecommendsOneThatFits) {
  const std::string exp = halo::testing::write_experiment(halo::testing::fresh_dir("plan"), {});
  const auto r = run_halo("plan " + exp + " --devices 1,4 --budget 64MiB --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  // 1 device: 3 checkpoint choices; 4 devices: sp 1, 2, 4 x 3 x shard_state none, optimizer,
  // gradients, weights
  ASSERT_EQ(j["setups"].size(), 3u + 36u);
  EXPECT_EQ(j["setups"][3]["shard_state"], "none");
  EXPECT_EQ(j["setups"][5]["shard_state"], "gradients");
  EXPECT_EQ(j["setups"][6]["shard_state"], "weights");
  ASSERT_FALSE(j["recommended"].is_null());
  for (const auto& s : j["setups"])
    if (s["fits"].get<bool>()) {
      EXPECT_LE(s["reserved_bytes"].get<int64_t>(), j["budget_bytes"].get<int64_t>());
    }
  EXPECT_GT(j["experiment_setup"]["ranks"][0]["layers"].size(), 5u);
}

TEST(PlanCli, TableMarksTheRecommendationAndNothingFitsIsSaid) {
  const std::string exp = halo::testing::write_experiment(halo::testing::fresh_dir("plan"), {});
  const auto r = run_halo("plan " + exp + " --devices 2 --budget 64MiB --detail");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("<- recommended"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("saved activations"), std::string::npos) << r.out;
  const auto none = run_halo("plan " + exp + " --budget 1KiB");
  EXPECT_EQ(none.code, 0) << none.out;
  EXPECT_NE(none.out.find("nothing fits"), std::string::npos) << none.out;
  const auto bad = run_halo("plan " + exp + " --budget lots");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("memory size 'lots'"), std::string::npos) << bad.out;
}

}  // namespace
