// Experiment files and --set overrides: the shipped files load clean, file errors name the
// path (and the line for bad JSON), overrides reach nested keys and malformed ones throw.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "config/ExperimentConfig.h"
#include "util/Error.h"

namespace halo::config {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string shipped(const std::string& name) { return std::string(HALO_SOURCE_DIR) + "/experiments/" + name; }

// A scratch directory per test, removed afterwards.
class ExperimentFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("halo-config-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& text, const std::string& name = "experiment.json") {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

// The util::Error message of f(), or a failure when it does not throw one.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const util::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected util::Error";
  return {};
}

class ShippedExperiment : public ::testing::TestWithParam<std::string> {};
TEST_P(ShippedExperiment, LoadsWithoutProblemsOrWarnings) {
  std::vector<std::string> warnings;
  ExperimentConfig c;
  ASSERT_NO_THROW(c = load_experiment(shipped(GetParam()), {}, &warnings));
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(parse_experiment(to_json(c)).config, c);
}
INSTANTIATE_TEST_SUITE_P(Files, ShippedExperiment,
                         ::testing::Values("quickstart.json", "convnext_xl_seed.json", "openlanev2_baseline.json",
                                           "openlanev2_baseline_r18.json"),
                         [](const auto& info) { return info.param.substr(0, info.param.find('.')); });

TEST(ShippedExperiments, QuickstartIsConvNeXtAttoOnTwoCpuRanks) {
  const ExperimentConfig c = load_experiment(shipped("quickstart.json"), {});
  EXPECT_EQ(c.model.arch, "convnext_atto");
  EXPECT_EQ(c.model.num_classes, 10);
  EXPECT_EQ(c.data.source, config::DataSource::Synthetic);
  EXPECT_EQ((std::vector<int64_t>{c.data.views, c.data.height, c.data.width}), (std::vector<int64_t>{7, 64, 256}));
  EXPECT_EQ(c.parallel.strategy, config::Strategy::Tp);
  EXPECT_EQ(c.parallel.sp, 2);
  EXPECT_EQ(c.parallel.device, config::Device::Cpu);
  EXPECT_EQ(c.optim.name, config::OptimizerKind::AdamW);
  EXPECT_LE(c.schedule.steps * c.data.batch, 400);  // about a minute on 2 CPU cores
  EXPECT_LT(c.schedule.warmup_steps, c.schedule.steps);
  EXPECT_EQ(c.train.seed, 0u);
  EXPECT_EQ(c.world_size(), 2);
}

TEST(ShippedExperiments, OpenLaneV2BaselineHasTheBaselineWeights) {
  const ExperimentConfig c = load_experiment(shipped("openlanev2_baseline.json"), {});
  EXPECT_EQ(c.task, config::Task::OpenLaneV2);
  EXPECT_EQ(c.data.views, 7);  // subset_A
  EXPECT_EQ(c.parallel.sp, 2);
  EXPECT_EQ(c.parallel.device, config::Device::Cpu);
  EXPECT_EQ(c.data.width % (32 * c.parallel.sp), 0);  // FPN stripes line up
  // plugin/mmdet3d/configs/baseline.py: loss weights, AdamW lr 1e-4 / wd 1e-4, max_norm 35.
  EXPECT_EQ(c.loss, (LossConfig{1.0, 2.5, 1.0, 2.5, 1.0, 2.0, 2.0}));
  EXPECT_EQ(c.optim.name, config::OptimizerKind::AdamW);
  EXPECT_DOUBLE_EQ(c.optim.lr, 1e-4);
  EXPECT_DOUBLE_EQ(c.optim.weight_decay, 1e-4);
  EXPECT_DOUBLE_EQ(c.optim.grad_clip, 35.0);
}

TEST(ShippedExperiments, TheResNet18BaselineDiffersOnlyInItsBackbone) {
  // The original baseline's backbone: ResNet-18, out_indices (2, 3) (stages 2 and 3 feed the FPN).
  ExperimentConfig r18 = load_experiment(shipped("openlanev2_baseline_r18.json"), {});
  const ExperimentConfig base = load_experiment(shipped("openlanev2_baseline.json"), {});
  EXPECT_EQ(r18.model.arch, "resnet18");
  r18.model.arch = base.model.arch;
  r18.name = base.name;
  EXPECT_EQ(r18, base);
}

TEST(ShippedExperiments, ConvNeXtXlSeedIsThePublishedTp4Setup) {
  const ExperimentConfig c = load_experiment(shipped("convnext_xl_seed.json"), {});
  EXPECT_EQ(c.model.arch, "convnext_xlarge");
  EXPECT_EQ((std::vector<int64_t>{c.data.views, c.data.height, c.data.width}), (std::vector<int64_t>{7, 512, 2048}));
  EXPECT_EQ(c.parallel.device, config::Device::Cuda);
  EXPECT_EQ(c.parallel.backend, config::Backend::Nccl);
  EXPECT_EQ(c.parallel.strategy, config::Strategy::Tp);
  EXPECT_EQ(c.parallel.sp, 4);
  EXPECT_EQ(c.train.precision, config::Precision::Fp32);
  EXPECT_EQ(c.optim.name, config::OptimizerKind::AdamW);
  EXPECT_EQ(c.schedule.steps, 100);
}

TEST_F(ExperimentFileTest, EveryProblemIsListedInTheError) {
  const std::string path = write(R"({
    "model": {"arch": "convnext_huge"},
    "data": {"views": 0},
    "parallel": {"device": "tpu"},
    "optim": {"lr": -0.1, "learning_rate": 0.1},
    "schedule": {"steps": 10, "warmup_steps": 20}
  })");
  std::vector<std::string> warnings;
  const std::string msg = error_of([&] { load_experiment(path, {}, &warnings); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("has 5 problems:"), std::string::npos) << msg;
  for (const char* field : {"model.arch", "data.views", "parallel.device", "optim.lr", "schedule.warmup_steps"})
    EXPECT_NE(msg.find(std::string("\n  - ") + field + ": "), std::string::npos) << field << " in\n" << msg;
  EXPECT_EQ(warnings, std::vector<std::string>{"unknown key 'optim.learning_rate' ignored; did you mean 'optim.lr'?"});
}

TEST_F(ExperimentFileTest, MissingFileNamesThePath) {
  const std::string path = (dir_ / "nope" / "missing.json").string();
  const std::string msg = error_of([&] { load_experiment(path, {}); });
  EXPECT_NE(msg.find("'" + path + "' does not exist"), std::string::npos) << msg;
}

TEST_F(ExperimentFileTest, DirectoryIsNotReadable) {
  const std::string msg = error_of([&] { load_experiment(dir_.string(), {}); });
  EXPECT_NE(msg.find("cannot read experiment file '" + dir_.string() + "': it is a directory"), std::string::npos)
      << msg;
}

TEST_F(ExperimentFileTest, InvalidJsonNamesThePathLineAndColumn) {
  const std::string path = write("{\n  \"name\": \"x\",\n  \"optim\": {\"lr\": 0.001,}\n}\n");
  const std::string msg = error_of([&] { load_experiment(path, {}); });
  EXPECT_NE(msg.find("experiment file '" + path + "' is not valid JSON"), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 3, column 25"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("[json.exception"), std::string::npos) << msg;
  const std::string empty = write("", "empty.json");
  EXPECT_NE(error_of([&] { load_experiment(empty, {}); }).find("'" + empty + "' is not valid JSON"), std::string::npos);
}

TEST_F(ExperimentFileTest, EndlessOrOversizedFilesAreRefusedQuickly) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = error_of([&] { load_experiment("/dev/zero", {}); });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_NE(msg.find("experiment file '/dev/zero' is longer than 4096 KiB"), std::string::npos) << msg;
  const std::string big = write(R"({"name": ")" + std::string(kMaxExperimentBytes, 'x') + R"("})", "big.json");
  EXPECT_NE(error_of([&] { load_experiment(big, {}); }).find("'" + big + "' is longer than"), std::string::npos);
}

TEST_F(ExperimentFileTest, DuplicateKeysAreErrorsNamingTheKey) {
  const std::string top = write(R"({"name": "a", "optim": {"lr": 0.1}, "name": "b"})", "top.json");
  EXPECT_NE(error_of([&] { load_experiment(top, {}); }).find("experiment file '" + top + "' has the key 'name' twice"),
            std::string::npos);
  const std::string deep = write(R"({"optim": {"lr": 0.1, "name": "sgd", "lr": 0.2}})", "deep.json");
  const std::string msg = error_of([&] { load_experiment(deep, {}); });
  EXPECT_NE(msg.find("has the key 'optim.lr' twice"), std::string::npos) << msg;
  EXPECT_NE(msg.find("keep one of them"), std::string::npos) << msg;
  // The same key in two different objects, or in objects inside an array, is no duplicate.
  const std::string ok = write(R"({"model": {"arch": "convnext_atto"}, "a": [{"k": 1}, {"k": 2}], "b": {"k": 1}})");
  EXPECT_NO_THROW(load_experiment(ok, {}));
  EXPECT_NE(error_of([&] { parse_json_strict(R"({"a": [{"k": 1, "k": 2}]})", "x"); }).find("the key 'a[].k' twice"),
            std::string::npos);
}

TEST_F(ExperimentFileTest, NonFiniteSettingChoosesStopOrSkip) {
  const std::string quick = shipped("quickstart.json");
  EXPECT_EQ(load_experiment(quick, {}).train.nonfinite, config::NonFinite::Stop);
  EXPECT_EQ(load_experiment(quick, {"train.nonfinite=skip"}).train.nonfinite, config::NonFinite::Skip);
  EXPECT_NE(error_of([&] {
              load_experiment(quick, {"train.nonfinite=ignore"});
            }).find("  - train.nonfinite: \"ignore\": choose one of: stop, skip"),
            std::string::npos);
}

TEST_F(ExperimentFileTest, OverridesApplyBeforeValidation) {
  const std::string quick = shipped("quickstart.json");
  const ExperimentConfig c = load_experiment(quick, {"parallel.sp=1", "parallel.strategy=none", "optim.lr=5e-4"});
  EXPECT_EQ(c.parallel.sp, 1);
  EXPECT_EQ(c.parallel.strategy, config::Strategy::None);
  EXPECT_EQ(c.optim.lr, 5e-4);
  const std::string msg = error_of([&] { load_experiment(quick, {"parallel.sp=1"}); });
  EXPECT_NE(msg.find("  - parallel.sp: 1: \"tp\" shards the width"), std::string::npos) << msg;
  // An unknown key given with --set is an error (issue 18; it was a warning), with the suggestion.
  EXPECT_NE(error_of([&] { load_experiment(quick, {"optim.learnin_rate=0.1"}); })
                .find("--set 'optim.learnin_rate=0.1': unknown key 'optim.learnin_rate' ignored; did you mean "
                      "'optim.lr'?"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_experiment(quick, {"optim.lr"}); }).find("--set 'optim.lr'"), std::string::npos);
}

struct Override {
  std::string assignment;
  std::string pointer;  // where the value lands
  json value;
};
std::ostream& operator<<(std::ostream& os, const Override& o) { return os << o.assignment; }

class ApplyOverride : public ::testing::TestWithParam<Override> {};
TEST_P(ApplyOverride, SetsTheValueAtThePath) {
  json j = {{"name", "x"}, {"optim", {{"lr", 0.001}, {"name", "adamw"}}}};
  apply_override(j, GetParam().assignment);
  const json& got = j.at(json::json_pointer(GetParam().pointer));
  EXPECT_EQ(got, GetParam().value);
  EXPECT_EQ(got.type(), GetParam().value.type()) << got.dump();
  EXPECT_EQ(j["name"], GetParam().pointer == "/name" ? GetParam().value : json("x"));  // others untouched
}
INSTANTIATE_TEST_SUITE_P(
    Values, ApplyOverride,
    ::testing::Values(Override{"optim.lr=5e-4", "/optim/lr", 5e-4}, Override{"optim.name=sgd", "/optim/name", "sgd"},
                      Override{"model.arch=\"convnext_tiny\"", "/model/arch", "convnext_tiny"},
                      Override{"parallel.sp=4", "/parallel/sp", 4u},
                      Override{"optim.scale_lr=true", "/optim/scale_lr", true},
                      Override{"name=my-run", "/name", "my-run"}, Override{"data.root=/a=b", "/data/root", "/a=b"},
                      Override{"data.root=", "/data/root", ""},
                      Override{"train.seed=18446744073709551615", "/train/seed", 18446744073709551615ull},
                      Override{"a.b.c=[1, 2]", "/a/b/c", json::array({1, 2})},
                      Override{"optim={\"lr\": 0.1}", "/optim", json{{"lr", 0.1}}}));

TEST(ApplyOverride, NewKeysWarnAndTypesAreChecked) {
  json j = json::object();
  apply_override(j, "schedule.steps=7");
  apply_override(j, "optim.scale_lr=yes");      // not JSON: the string "yes"
  apply_override(j, "data.pixels_per_view=3");  // unknown key
  const ConfigResult r = parse_experiment(j);
  EXPECT_EQ(r.config.schedule.steps, 7);
  ASSERT_EQ(r.problems.size(), 1u) << describe_problems(r.problems);
  EXPECT_EQ(r.problems[0].field, "optim.scale_lr");
  EXPECT_EQ(r.problems[0].value, "\"yes\"");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind("unknown key 'data.pixels_per_view' ignored", 0), 0u) << r.warnings[0];
}

class MalformedOverride : public ::testing::TestWithParam<std::string> {};
TEST_P(MalformedOverride, Throws) {
  json j = {{"optim", {{"lr", 0.001}}}};
  const json before = j;
  const std::string msg = error_of([&] { apply_override(j, GetParam()); });
  EXPECT_NE(msg.find("--set '" + GetParam() + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hint: write --set section.key=value"), std::string::npos) << msg;
  EXPECT_EQ(j, before);
}
INSTANTIATE_TEST_SUITE_P(Text, MalformedOverride,
                         ::testing::Values("optim.lr", "=5", ".lr=1", "optim..lr=1", "optim.=1", "", "optim.lr.x=1"));

}  // namespace
}  // namespace halo::config

namespace halo::config {
namespace {

// Hostile files: each is a util::Error naming the file and the field, never a crash.
struct Hostile {
  const char* name;
  std::string text;
  const char* in_message;  // a part of the error
};
std::ostream& operator<<(std::ostream& os, const Hostile& h) { return os << h.name; }

std::string nested(const std::string& prefix, int depth, const std::string& suffix) {
  return prefix + std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']') + suffix;
}

class HostileFile : public ExperimentFileTest, public ::testing::WithParamInterface<Hostile> {};
TEST_P(HostileFile, IsAClearErrorNamingFileAndField) {
  const std::string path = write(GetParam().text);
  const std::string msg = error_of([&] { load_experiment(path, {}); });
  EXPECT_NE(msg.find("'" + path + "'"), std::string::npos) << msg.substr(0, 2000);
  EXPECT_NE(msg.find(GetParam().in_message), std::string::npos) << msg.substr(0, 2000);
  EXPECT_LT(msg.size(), 2000u) << "the error quotes too much of the file";
}
INSTANTIATE_TEST_SUITE_P(
    Files, HostileFile,
    ::testing::Values(
        Hostile{"steps_1e300", R"({"schedule": {"steps": 1e300}})",
                "  - schedule.steps: 1e+300: use an integer from 1 to"},
        Hostile{"sp_2pow40", R"({"parallel": {"sp": 1099511627776}})",
                "  - parallel.sp: 1099511627776: use an integer from 1 to 1024"},
        Hostile{"negative_steps", R"({"schedule": {"steps": -5}})", "  - schedule.steps: -5: use an integer from 1 to"},
        Hostile{"lr_1e400", R"({"optim": {"lr": -1e400}})", "is not valid JSON"},
        Hostile{"deep_top_level", nested("", 100000, ""), "  - (top level): "},
        Hostile{"deep_section", nested(R"({"model": )", 100000, "}"), "  - model: "},
        Hostile{"deep_field", nested(R"({"optim": {"lr": )", 100000, "}}"), "  - optim.lr: "},
        Hostile{"huge_string", R"({"name": ")" + std::string(1 << 20, 'x') + R"("})", "  - name: "},
        Hostile{"binary",
                std::string("\x7f"
                            "ELF\x02\x01\x01\x00\x00\xff",
                            10),
                "is not valid JSON"},
        Hostile{"nul_in_string", std::string(R"({"name": "a)") + '\0' + R"(b"})", "is not valid JSON"},
        // A duplicate key is an error naming it (issue 18; the last copy used to win).
        Hostile{"duplicate_then_wrong", R"({"data": {"views": 2, "views": "two"}})", "has the key 'data.views' twice"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(ExperimentFileTest, UnknownHostileKeysWarnWithoutEchoingEverything) {
  const std::string long_key(100000, 'k');
  const std::string path = write(R"({"optim": {"lrr": 0.1, ")" + long_key + R"(": 1}, "schedul": {"steps": 3}})");
  std::vector<std::string> warnings;
  const ExperimentConfig c = load_experiment(path, {}, &warnings);
  EXPECT_EQ(c, ExperimentConfig{});
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), "unknown key 'optim.lrr' ignored; did you mean 'optim.lr'?"),
            warnings.end());
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), "unknown key 'schedul' ignored; did you mean 'schedule'?"),
            warnings.end());
  for (const auto& w : warnings) {
    EXPECT_LT(w.size(), 300u) << w.substr(0, 300);
  }
}

}  // namespace
}  // namespace halo::config
