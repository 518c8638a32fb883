// `halo verify` end to end through the real CLI: spawned ranks, JSON report, exit codes,
// and the pre-launch error for a width that cannot be sharded.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "RunHelpers.h"
#include "arch/Backbones.h"
#include "launch/Verify.h"

namespace {

using Result = halo::testing::CliResult;
Result run(const std::string& args) { return halo::testing::run_halo(args); }

TEST(Verify, AcceptsEveryBackboneVariant) {
  for (const std::string& name : halo::arch::backbone_name_list()) {
    halo::launch::VerifyOptions o;
    o.arch = name;
    o.input = {1, 3, 64, 128};
    o.sp = 2;
    EXPECT_NO_THROW(halo::launch::validate(o)) << name;
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

// ResNet's and RegNet's overlapping windows: the 7x7/2 stem conv, the 3x3/2 max-pool, stride-2
// 3x3 (grouped) convs and strided 1x1 shortcuts, BatchNorm and squeeze-excitation statistics
// over the sp group. At sp=4 and width 128,
// layer4's 3x3 convs read one column either side of one-column stripes (a stripe narrower
// than its halo); --dp 2 keeps each group's own statistics.
class VerifyResNetCli : public ::testing::TestWithParam<std::string> {};

TEST_P(VerifyResNetCli, ShardedEqualsUnshardedInputGradientIncluded) {
  Result r = run("verify --json " + GetParam());
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["ok"].get<bool>()) << r.out;
  EXPECT_LE(j["max_rel_error"].get<double>(), 1e-10);
  EXPECT_LE(j["errors"]["input_grad"].get<double>(), 1e-10);
  const bool regnet = GetParam().find("regnet") != std::string::npos;
  const std::vector<std::string> some =
      regnet ? std::vector<std::string>{"grad:stem.conv.weight", "grad:s2.b1.downsample.conv.weight",
                                        "grad:s4.b1.se.fc1.weight", "grad:s4.b1.conv2.bn.weight", "grad:head.fc.weight"}
             : std::vector<std::string>{"grad:conv1.weight", "grad:bn1.weight", "grad:layer2.0.downsample.0.weight",
                                        "grad:layer4.0.conv2.weight", "grad:fc.weight"};
  for (const std::string& p : some) EXPECT_TRUE(j["errors"].contains(p)) << p;
}

INSTANTIATE_TEST_SUITE_P(Configs, VerifyResNetCli,
                         ::testing::Values("--arch resnet_test --sp 2 --input 2,3,64,128",
                                           "--arch resnet_test --sp 3 --input 2,3,64,96 --checkpoint",
                                           "--arch resnet_test --sp 4 --input 1,3,64,128",
                                           "--arch resnet_test --sp 4 --input 1,3,64,128 --checkpoint",
                                           "--arch resnet_test_bottleneck --sp 3 --input 2,3,64,96",
                                           "--arch resnet_test_bottleneck --sp 4 --input 1,3,64,128 --checkpoint",
                                           "--arch resnet_test --sp 2 --dp 2 --input 2,3,64,64",
                                           "--arch regnet_test --sp 3 --input 2,3,64,96",
                                           "--arch regnet_test --sp 4 --input 1,3,64,128 --checkpoint"));

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
