// A loss that becomes NaN or infinite (optim.lr=1e6 without clipping): by default the run stops
// as FAILED naming the step; with train.nonfinite=skip those updates are skipped and it goes on.
#include <gtest/gtest.h>

#include <cmath>

#include "RunHelpers.h"

namespace halo::testing {
namespace {

const nlohmann::json kExploding = {{"optim", {{"lr", 1e6}, {"grad_clip", 0}}}, {"schedule", {{"steps", 30}}}};

TEST(NonFinite, ANaNLossStopsTheRunAsFailedNamingTheStep) {
  const std::string dir = fresh_dir("nan-stop"), db = dir + "/history.db";
  CliResult r = run_halo("launch --no-progress --db " + db + " " + write_experiment(dir, kExploding));
  EXPECT_EQ(r.code, 1) << r.out;
  const auto at = r.out.find(": loss became ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("type_error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("train.nonfinite=skip"), std::string::npos) << r.out;
  CliResult l = run_halo("runs list --json --db " + db);
  ASSERT_EQ(l.code, 0) << l.out;
  const auto runs = nlohmann::json::parse(l.out);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "FAILED");
  const std::string reason = runs[0]["exit_reason"].get<std::string>();
  EXPECT_NE(reason.find("loss became "), std::string::npos) << reason;
  // The step it names is the first step whose loss is not finite, and no step after it ran.
  const auto steps = read_events(dir + "/run", "step", 0);
  ASSERT_FALSE(steps.empty());
  const auto& last = steps.back();
  EXPECT_TRUE(last["losses"]["loss"].is_null()) << last.dump();
  EXPECT_NE(reason.find("at step " + std::to_string(last["step"].get<int64_t>())), std::string::npos) << reason << "\n"
                                                                                                      << last.dump();
  for (size_t i = 0; i + 1 < steps.size(); ++i) EXPECT_TRUE(steps[i]["losses"]["loss"].is_number()) << i;
}

TEST(NonFinite, SkipModeSkipsTheNonFiniteUpdatesAndFinishes) {
  const std::string dir = fresh_dir("nan-skip"), db = dir + "/history.db";
  nlohmann::json patch = kExploding;
  patch["train"] = {{"nonfinite", "skip"}};
  CliResult r = run_halo("launch --no-progress --db " + db + " " + write_experiment(dir, patch));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("finished: 30 steps, last loss "), std::string::npos) << r.out;
  int skipped = 0;
  for (const auto& s : read_events(dir + "/run", "step", 0)) {
    const bool finite = s["losses"]["loss"].is_number() && std::isfinite(s["losses"]["loss"].get<double>()) &&
                        s["grad_norm"].is_number();
    EXPECT_EQ(s["skipped"].get<bool>(), !finite) << s.dump();
    skipped += s["skipped"].get<bool>();
  }
  EXPECT_GT(skipped, 0);
  CliResult m = run_halo("runs metrics 1 --key loss --json --db " + db);
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_EQ(nlohmann::json::parse(m.out).size(), 30u) << "a NaN step's loss is kept as a NULL row";
}

}  // namespace
}  // namespace halo::testing
