// Halo's OpenLane-V2 score against the official openlanev2 devkit: devkit_reference.py writes
// ground-truth frames (with empty frames and frames without topology) and perturbed
// predictions and scores them with the devkit; Halo scores the same files via the API and
// `halo eval --json`. All five numbers must agree to 1e-6; the perfect prediction scores 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "RunHelpers.h"
#include "data/FrameReader.h"
#include "eval/Evaluate.h"
#include "eval/PredictionsJson.h"

namespace halo::eval {
namespace {

using nlohmann::json;
const char* const kKeys[] = {"DET_l", "DET_t", "TOP_ll", "TOP_lt", "OLS"};

std::string quote(const std::string& s) { return "'" + s + "'"; }

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::map<int, std::string>& generated_roots() {
  static std::map<int, std::string> roots;
  return roots;
}

// Removes the generated folders when the test program ends.
class RemoveGenerated : public ::testing::Environment {
 public:
  void TearDown() override {
    for (const auto& [seed, root] : generated_roots()) std::filesystem::remove_all(root);
  }
};
[[maybe_unused]] const auto* const kRemoveGenerated = ::testing::AddGlobalTestEnvironment(new RemoveGenerated);

// Ground truth, predictions and the devkit's scores for one seed, generated once per process.
const std::string& reference_root(int seed) {
  auto& roots = generated_roots();
  auto it = roots.find(seed);
  if (it != roots.end()) return it->second;
  const std::string root = halo::testing::fresh_dir("eval-devkit");
  const auto r = halo::testing::run_command(quote(HALO_PYTHON) + " " + quote(HALO_EVAL_REFERENCE) + " generate " +
                                            quote(root) + " " + std::to_string(seed));
  EXPECT_EQ(r.code, 0) << r.out;
  return roots[seed] = root;
}

json api_scores(const std::string& root, const std::string& pred) {
  std::vector<data::Frame> frames;
  for (const auto& ref : data::list_frames(root, "val")) frames.push_back(data::read_frame(root, ref));
  const Scores s = evaluate(frames, read_predictions(pred));
  return {{"DET_l", s.det_l}, {"DET_t", s.det_t}, {"TOP_ll", s.top_ll}, {"TOP_lt", s.top_lt}, {"OLS", s.ols}};
}

double max_difference(const json& halo, const json& devkit) {
  double worst = 0;
  for (const char* k : kKeys) worst = std::max(worst, std::abs(halo.at(k).get<double>() - devkit.at(k).get<double>()));
  return worst;
}

class DevkitAgreement : public ::testing::TestWithParam<int> {};

TEST_P(DevkitAgreement, ApiAndCliMatchTheDevkit) {
  const std::string& root = reference_root(GetParam());
  const json expected = read_json(root + "/expected.json");
  ASSERT_EQ(expected.size(), 6u);
  for (const auto& [variant, devkit] : expected.items()) {
    const std::string pred = root + "/pred_" + variant + ".json";
    const json halo = api_scores(root, pred);
    const double diff = max_difference(halo, devkit);
    std::printf("[devkit agreement] seed %d %-7s devkit %s | max |halo - devkit| = %.3g\n", GetParam(), variant.c_str(),
                devkit.dump().c_str(), diff);
    EXPECT_LE(diff, 1e-6) << variant << ": halo " << halo.dump() << " devkit " << devkit.dump();
    if (variant == "perfect")
      for (const char* k : kKeys) {
        EXPECT_EQ(devkit.at(k).get<double>(), 1.0) << k;
        EXPECT_EQ(halo.at(k).get<double>(), 1.0) << k;
      }
    else
      EXPECT_LT(devkit.at("OLS").get<double>(), 0.99) << variant << " should not be perfect";
    if (variant == "empty") {
      EXPECT_EQ(halo.at("DET_l").get<double>(), 0.0);
    }
  }
  // The CLI prints exactly the five numbers.
  const auto r =
      halo::testing::run_halo("eval --gt " + quote(root) + " --pred " + quote(root + "/pred_noisy.json") + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const json cli = json::parse(r.out);
  EXPECT_EQ(cli.size(), 5u) << r.out;
  EXPECT_LE(max_difference(cli, expected.at("noisy")), 1e-6) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Seeds, DevkitAgreement, ::testing::Values(1, 2, 3));

TEST(EvalCli, RejectsBadPredictionFilesNamingTheField) {
  const std::string& root = reference_root(1);
  const json good = read_json(root + "/pred_close.json");
  const std::string first = good.at("results").begin().key();
  auto run_with = [&](const std::string& text) {
    const std::string path = root + "/bad.json";
    std::ofstream(path) << text;
    return halo::testing::run_halo("eval --gt " + quote(root) + " --pred " + quote(path) + " --json");
  };
  json d = good;
  d["results"]["val/999/123"] = d["results"][first];
  auto r = run_with(d.dump());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("results/val/999/123 names a frame that is not in the ground truth"), std::string::npos)
      << r.out;

  d = good;
  d["results"].erase(first);
  r = run_with(d.dump());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("no prediction for frame " + first), std::string::npos) << r.out;

  d = good;
  d["results"][first]["predictions"]["topology_lcte"] = json::array();
  r = run_with(d.dump());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("results/" + first + "/predictions/topology_lcte has 0 rows"), std::string::npos) << r.out;

  std::string text = good.dump();
  const auto pos = text.find("\"confidence\":");
  text.replace(pos, text.find_first_of(",}", pos) - pos, "\"confidence\":NaN");
  r = run_with(text);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("is not valid JSON"), std::string::npos) << r.out;

  d = good;
  d["results"][first]["predictions"].erase("lane_centerline");
  r = run_with(d.dump());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("results/" + first + "/predictions/lane_centerline is missing"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace halo::eval
