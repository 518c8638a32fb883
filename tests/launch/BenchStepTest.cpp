// `halo bench step`: Halo's step through the launcher and timm's in the .venv, both timed on
// the same experiment; without timm in the interpreter, a clear refusal before anything runs.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "RunHelpers.h"

namespace halo::testing {
namespace {

nlohmann::json json_after_progress(const CliResult& r) {
  const auto at = r.out.find("\n{");
  return nlohmann::json::parse(r.out.substr(at == std::string::npos ? 0 : at + 1));
}

std::string tiny_atto(const std::string& tag, int sp) {
  return write_experiment(fresh_dir(tag), {{"model", {{"arch", "convnext_atto"}}},
                                           {"data", {{"views", 2}, {"height", 32}, {"width", 64}, {"batch", 1}}},
                                           {"parallel", {{"sp", sp}, {"strategy", sp > 1 ? "tp" : "none"}}}});
}

TEST(BenchStep, HaloAgainstTimmOnTheSameStep) {
  const CliResult r = run_halo("bench step " + tiny_atto("bench-step", 2) + " --vs timm --steps 2 --rounds 2 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = json_after_progress(r);
  EXPECT_EQ(j["arch"], "convnext_atto");
  EXPECT_EQ(j["images"].get<int>(), 2);
  EXPECT_EQ(j["sp"].get<int>(), 2);
  for (const char* side : {"halo", "timm"}) {
    ASSERT_EQ(j[side]["rounds_ms"].size(), 2u) << side;
    EXPECT_GT(j[side]["step_ms"].get<double>(), 0) << side;
    EXPECT_GT(j[side]["backward_ms"].get<double>(), 0) << side;
    double fastest = 1e30;
    for (const auto& v : j[side]["rounds_ms"]) fastest = std::min(fastest, v.get<double>());
    EXPECT_DOUBLE_EQ(j[side]["step_ms"].get<double>(), fastest) << side;
  }
  EXPECT_NEAR(j["ratio"].get<double>(), j["halo"]["step_ms"].get<double>() / j["timm"]["step_ms"].get<double>(), 1e-9);
  EXPECT_NE(j["peer"].get<std::string>().find("timm "), std::string::npos);
}

// Both sides' profiled step: ops by self time, Halo's own kernels among them, the sums consistent.
TEST(BenchStep, ProfileNamesWhereEachSidesStepGoes) {
  const CliResult r =
      run_halo("bench step " + tiny_atto("bench-step-profile", 1) + " --vs timm --steps 2 --rounds 1 --profile --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = json_after_progress(r);
  for (const char* side : {"halo", "timm"}) {
    const auto& p = j[side]["profile"];
    ASSERT_TRUE(p.is_object()) << side << ": " << j.dump();
    ASSERT_GT(p["ops"].size(), 5u) << side;
    double sum = 0, previous = 1e30;
    for (const auto& op : p["ops"]) {
      EXPECT_LE(op["self_ms"].get<double>(), previous) << side << ": not sorted by self time";
      EXPECT_LE(op["self_ms"].get<double>(), op["total_ms"].get<double>() + 1e-9) << side << " " << op["name"];
      EXPECT_GE(op["calls"].get<int64_t>(), 1) << side;
      previous = op["self_ms"].get<double>();
      if (!op["name"].get<std::string>().ends_with(" (other thread)")) sum += previous;
    }
    EXPECT_NEAR(p["ops_self_ms"].get<double>(), sum, 1e-6 * sum + 1e-6) << side;
    EXPECT_GT(p["step_ms"].get<double>(), 0) << side;
  }
  std::set<std::string> halo_ops;
  for (const auto& op : j["halo"]["profile"]["ops"]) halo_ops.insert(op["name"].get<std::string>());
  EXPECT_TRUE(halo_ops.count("aten::mm")) << j["halo"]["profile"].dump();
  EXPECT_TRUE(halo_ops.count("DepthwiseConvFunction")) << "the depthwise weight gradient's node";
  EXPECT_TRUE(halo_ops.count("BlockPointwiseFunction")) << "recompute cheap's node";
  // The table form names both sides.
  const CliResult t =
      run_halo("bench step " + tiny_atto("bench-step-profile-table", 1) + " --steps 2 --rounds 1 --profile");
  ASSERT_EQ(t.code, 0) << t.out;
  EXPECT_NE(t.out.find("halo (rank 0), one profiled step"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("aten::"), std::string::npos) << t.out;
}

TEST(BenchStep, TableWithoutAPeer) {
  const CliResult r = run_halo("bench step " + tiny_atto("bench-step-alone", 1) + " --steps 2 --rounds 1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("halo "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("timm"), std::string::npos) << r.out;
}

TEST(BenchStep, SaysWhenTimmIsMissing) {
  // Debian's own python3 has neither torch nor timm.
  const CliResult r =
      run_halo("bench step " + tiny_atto("bench-step-notimm", 1) + " --vs timm --python /usr/bin/python3");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("timm is not installed in /usr/bin/python3"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("round 1"), std::string::npos) << "nothing should run: " << r.out;
}

}  // namespace
}  // namespace halo::testing
