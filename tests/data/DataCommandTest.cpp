// `halo data synth` and `halo data check` end to end through the real binary.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launch/RunHelpers.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;

TEST(DataCommand, SynthThenCheck) {
  const std::string d = fresh_dir("data-cli");
  auto r =
      run_halo("data synth --out " + d + " --subset B --segments 2 --frames 2 --seed 9 --image-scale 0.0625 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["frames"], 4);
  EXPECT_EQ(s["images"], 24);
  EXPECT_TRUE(fs::exists(d + "/data_dict_subset_B.json"));

  r = run_halo("data check " + d + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto c = nlohmann::json::parse(r.out);
  EXPECT_EQ(c["ok"], true);
  EXPECT_EQ(c["frames"], 4);
  EXPECT_EQ(c["images"], 24);
  EXPECT_EQ(c["segments"].size(), 2u);
  EXPECT_EQ(c["lanes"], s["lanes"]);
  EXPECT_EQ(c["elements"], s["elements"]);

  r = run_halo("data check " + d + " --split-file " + d + "/data_dict_subset_B.json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("train: 2 segments, 4 frames, 24 images, 0 problems"), std::string::npos) << r.out;

  r = run_halo("data bench " + d + " --height 64 --width 128 --batch 2 --batches 3 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto b = nlohmann::json::parse(r.out);
  EXPECT_EQ(b["batches"], 3);  // the second epoch supplies the third batch
  EXPECT_EQ(b["frames"], 6);
  EXPECT_GT(b["frames_per_s"].get<double>(), 0.0);

  // A damaged image and JSON: non-zero exit, every problem listed with its file.
  std::string img;  // in segment 00000, the damaged JSON in 00001 (whose images are not read)
  for (const auto& e : fs::recursive_directory_iterator(d + "/train/00000"))
    if (e.path().extension() == ".jpg") img = e.path().string();
  std::ofstream(img, std::ios::trunc) << "garbage";
  std::string json;
  for (const auto& e : fs::recursive_directory_iterator(d + "/train/00001"))
    if (e.path().extension() == ".json") json = e.path().string();
  std::ofstream(json, std::ios::trunc) << "{}";
  r = run_halo("data check " + d + " --json");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.code, 1) << "problems found: exit 1, as docs/guide/openlanev2.md says";
  const auto brace = r.out.find('{');
  ASSERT_NE(brace, std::string::npos) << r.out;
  c = nlohmann::json::parse(r.out.substr(brace, r.out.rfind('}') - brace + 1));
  EXPECT_EQ(c["ok"], false);
  EXPECT_EQ(c["problems"], 2);
  EXPECT_NE(r.out.find(img + ": is not a decodable image"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(json + ": version is missing"), std::string::npos) << r.out;
  fs::remove_all(d);
}

TEST(DataCommand, BadOptionsFailWithAHint) {
  auto r = run_halo("data synth --out /tmp/x --subset C");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--subset C is not a subset"), std::string::npos) << r.out;
  r = run_halo("data check /nonexistent-halo-data");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.code, 2) << "the check could not run: exit 2";
  EXPECT_NE(r.out.find("/nonexistent-halo-data/train: no such split folder"), std::string::npos) << r.out;
  r = run_halo("data --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("synth"), std::string::npos);
}

}  // namespace
}  // namespace halo::testing
