// Evaluation during OpenLane-V2 training end to end: `halo data synth` train + val splits,
// `halo launch` on sp = 2 with train.eval_every; the eval events, prediction files, `halo eval`
// on those files and the history agree; misconfigured evaluation fails with a clear message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "RunHelpers.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;

void synth(const std::string& root, const std::string& split, int frames, int seed) {
  const CliResult r =
      run_halo("data synth --out " + root + " --split " + split + " --frames " + std::to_string(frames) + " --seed " +
               std::to_string(seed) + " --image-scale 0.05 --segments 1");
  ASSERT_EQ(r.code, 0) << r.out;
}

nlohmann::json openlane(const std::string& root) {
  return {{"task", "openlanev2"},
          {"model", {{"arch", "convnext_test"}, {"dim", 16}}},
          {"data",
           {{"source", "openlanev2"},
            {"root", root},
            {"views", 7},
            {"height", 64},
            {"width", 128},
            {"batch", 1},
            {"workers", 1}}},
          {"schedule", {{"steps", 3}, {"warmup_steps", 0}}},
          {"train", {{"seed", 2}, {"eval_every", 2}}}};
}

TEST(OpenLaneEval, EvalEventsMatchHaloEvalOnThePredictionFilesAndTheHistory) {
  const std::string dir = fresh_dir("oleval");
  const std::string root = dir + "/data", db = dir + "/history.db";
  synth(root, "train", 2, 5);
  synth(root, "val", 3, 6);
  const CliResult l = run_halo("launch --no-progress " + write_experiment(dir, openlane(root)) + " --db " + db);
  ASSERT_EQ(l.code, 0) << l.out;
  const auto evals = read_events(dir + "/run", "eval");
  ASSERT_EQ(evals.size(), 2u);  // after step 2 (eval_every) and after the last step
  EXPECT_EQ(evals[0]["step"], 1);
  EXPECT_EQ(evals[1]["step"], 2);
  for (const auto& e : evals) {
    EXPECT_EQ(e["frames"], 3) << e.dump();
    for (const char* k : {"DET_l", "DET_t", "TOP_ll", "TOP_lt", "OLS"}) {
      EXPECT_GE(e[k].get<double>(), 0.0) << k;
      EXPECT_LE(e[k].get<double>(), 1.0) << k;
    }
    // The file holds every val frame in the devkit's format, and `halo eval` scores it the same.
    const std::string pred = e["predictions"];
    EXPECT_EQ(fs::path(pred).parent_path(), fs::path(dir + "/run/predictions"));
    const auto doc = nlohmann::json::parse(std::ifstream(pred));
    std::set<std::string> keys;
    for (const auto& [key, v] : doc.at("results").items()) {
      keys.insert(key);
      EXPECT_EQ(v.at("predictions").at("lane_centerline").size(), 50u);
      EXPECT_EQ(v.at("predictions").at("traffic_element").size(), 30u);
    }
    const CliResult list = run_command("find " + root + "/val -path '*/info/*.json' | wc -l");
    EXPECT_EQ(std::to_string(keys.size()) + "\n", list.out);
    for (const auto& k : keys) {
      EXPECT_EQ(k.rfind("val/", 0), 0u) << k;
    }
    const CliResult scored = run_halo("eval --gt " + root + " --split val --pred " + pred + " --json");
    ASSERT_EQ(scored.code, 0) << scored.out;
    const auto s = nlohmann::json::parse(scored.out);
    for (const char* k : {"DET_l", "DET_t", "TOP_ll", "TOP_lt", "OLS"})
      EXPECT_EQ(s.at(k).get<double>(), e[k].get<double>()) << k << " " << pred;
    std::printf("step %d: DET_l %.4f DET_t %.4f TOP_ll %.4f TOP_lt %.4f OLS %.4f\n", e["step"].get<int>(),
                e["DET_l"].get<double>(), e["DET_t"].get<double>(), e["TOP_ll"].get<double>(),
                e["TOP_lt"].get<double>(), e["OLS"].get<double>());
  }
  // The history keeps them as metrics of their step.
  const auto runs = nlohmann::json::parse(run_halo("runs list --json --db " + db).out);
  ASSERT_EQ(runs.size(), 1u);
  const CliResult csv =
      run_halo("runs metrics " + std::to_string(runs[0]["id"].get<int64_t>()) + " --key eval/OLS --csv --db " + db);
  ASSERT_EQ(csv.code, 0) << csv.out;
  EXPECT_NE(csv.out.find("1,eval/OLS,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("2,eval/OLS,"), std::string::npos) << csv.out;

  // A root without the evaluation split: the launch fails naming the split and the root.
  const std::string only_train = dir + "/only-train";
  synth(only_train, "train", 1, 7);
  const CliResult missing =
      run_halo("launch --no-progress " + write_experiment(fresh_dir("oleval-b"), openlane(only_train)) + " --db " + db);
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.out.find("data.eval_split 'val'"), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find(only_train), std::string::npos) << missing.out;
}

TEST(OpenLaneEval, EvalEveryOnGeneratedFramesIsRefusedBeforeStarting) {
  const std::string dir = fresh_dir("oleval-synthetic");
  const CliResult r = run_halo("launch --no-progress " + write_experiment(dir, {{"train", {{"eval_every", 2}}}}) +
                               " --db " + dir + "/h.db");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("train.eval_every"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("data.source"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/run/events.jsonl"));
}

}  // namespace
}  // namespace halo::testing
