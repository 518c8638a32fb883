// `halo verify` end to end through the real CLI: spawned ranks, JSON report, exit codes,
// and the pre-launch error for a width that cannot be sharded.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "RunHelpers.h"
#include "arch/ConvNeXtVariant.h"
#include "launch/Verify.h"

namespace {

using Result = halo::testing::CliResult;
Result run(const std::string& args) { return halo::testing::run_halo(args); }

TEST(Verify, AcceptsEveryConvNeXtVariant) {
  for (const auto& v : halo::arch::convnext_variants()) {
    halo::launch::VerifyOptions o;
    o.arch = v.name;
    o.input = {1, 3, 64, 128};
    o.sp = 2;
    EXPECT_NO_THROW(halo::launch::validate(o)) << v.name;
  }
}

class VerifyCli : public ::testing::TestWithParam<std::string> {};

TEST_P(VerifyCli, ShardedEqualsUnsharded) {
  Result r = run("verify --json " + GetParam());
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_LE(j["max_rel_error"].get<double>(), j["tolerance"].get<double>());
  EXPECT_LE(j["errors"]["input_grad"].get<double>(), j["tolerance"].get<double>());
  EXPECT_TRUE(j["errors"].contains("grad:stem.0.weight"));
  EXPECT_TRUE(j["errors"].contains("grad:head.fc.weight"));
  EXPECT_GT(j["errors"].size(), 40u);  // every parameter gradient is reported
}

INSTANTIATE_TEST_SUITE_P(Configs, VerifyCli,
                         ::testing::Values("--sp 2", "--sp 3 --input 2,3,64,96 --checkpoint", "--sp 2 --dp 2",
                                           "--sp 4 --input 1,3,32,256 --no-overlap",
                                           "--sp 2 --dtype float32 --input 1,3,64,128"));

TEST(VerifyCli, UnshardableWidthFailsBeforeLaunchWithNearestWidths) {
  Result r = run("verify --sp 2 --input 1,3,64,100");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("stem.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("64 and 128"), std::string::npos) << r.out;
}

TEST(VerifyCli, BadOptionsAreListedTogether) {
  Result r = run("verify --arch nope --sp 0 --input 1,3,64");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--input"), std::string::npos) << r.out;
}

TEST(HaloCli, VersionAndHelp) {
  Result v = run("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("halo 0."), std::string::npos) << v.out;
  for (const char* verb : {"verify", "bench"}) {
    Result h = run(std::string(verb) + " --help");
    EXPECT_EQ(h.code, 0) << verb << ": " << h.out;
  }
}

}  // namespace

namespace {

TEST(BenchCli, CommReportsLayersAndConfigs) {
  Result r = run("bench comm --json --batch 1 --dim 8 --height 8 --width 32 --depth 1 --iters 1 --warmup 0");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  ASSERT_EQ(j["configs"].size(), 3u);
  EXPECT_GT(j["configs"][1]["step_ms"].get<double>(), 0.0);
  ASSERT_EQ(j["layers"].size(), 1u);
  // A 7x7 depthwise conv on 2 ranks: 3 columns from the neighbour, both ways.
  EXPECT_EQ(j["layers"][0]["halo_left"].get<int>() + j["layers"][0]["halo_right"].get<int>(), 3);
  EXPECT_EQ(j["layers"][0]["bytes_per_step"].get<int64_t>(), 2 * 3 * 1 * 8 * 8 * 4);
}

}  // namespace
