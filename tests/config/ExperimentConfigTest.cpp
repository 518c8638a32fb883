// The experiment config: defaults round-trip, every problem is reported at once with its
// field, value and fix; unknown keys warn with a suggestion. Files and --set: ExperimentFileTest.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "config/ExperimentConfig.h"

namespace halo::config {
namespace {

using nlohmann::json;

std::vector<std::string> fields(const ConfigResult& r) {
  std::vector<std::string> out;
  for (const auto& p : r.problems) out.push_back(p.field);
  return out;
}

// The only problem, checked to be at `field`.
ConfigProblem only_problem(const ConfigResult& r, const std::string& field) {
  EXPECT_EQ(fields(r), std::vector<std::string>{field}) << describe_problems(r.problems);
  return r.problems.empty() ? ConfigProblem{} : r.problems.front();
}

ConfigResult parse(const std::string& text) { return parse_experiment(json::parse(text)); }

TEST(ExperimentConfig, DefaultsRoundTrip) {
  const ExperimentConfig defaults;
  const ConfigResult r = parse_experiment(to_json(defaults));
  EXPECT_TRUE(r.problems.empty()) << describe_problems(r.problems);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.config, defaults);
  EXPECT_EQ(parse_experiment(json::object()).config, defaults);
  EXPECT_EQ(defaults.world_size(), 2);
}

TEST(ExperimentConfig, ToJsonWritesEveryField) {
  const json j = to_json(ExperimentConfig{});
  const std::map<std::string, size_t> sections{{"model", 6},  {"loss", 7},     {"data", 8}, {"parallel", 10},
                                               {"optim", 10}, {"schedule", 3}, {"train", 7}};
  EXPECT_EQ(j.size(), 3 + sections.size());
  for (const auto& [name, n] : sections) {
    EXPECT_EQ(j.at(name).size(), n) << name;
  }
  EXPECT_EQ(j["name"], "experiment");
  EXPECT_EQ(j["run_dir"], "");
  EXPECT_EQ(j["optim"]["lr"], 1e-3);
  EXPECT_EQ(j["train"]["seed"], 0u);
  EXPECT_EQ(j["parallel"]["strategy"], "tp");
}

TEST(ExperimentConfig, PretrainedSkipIsAListOrOneStringOfCommaSeparatedPrefixes) {
  auto skip = [](const json& v) {
    return parse_experiment(json{{"model", {{"pretrained_skip", v}}}}).config.model.pretrained_skip;
  };
  EXPECT_EQ(skip(json::array({"head.", "stages.0."})), (std::vector<std::string>{"head.", "stages.0."}));
  EXPECT_EQ(skip("head., stages.0.,"), (std::vector<std::string>{"head.", "stages.0."}));
  EXPECT_TRUE(skip("").empty());
  for (const json& bad : {json(3), json::array({"head.", 2}), json::array({""})}) {
    const ConfigResult r = parse_experiment(json{{"model", {{"pretrained_skip", bad}}}});
    ASSERT_EQ(r.problems.size(), 1u) << bad;
    EXPECT_EQ(r.problems[0].field, "model.pretrained_skip");
    EXPECT_NE(r.problems[0].fix.find("list of strings"), std::string::npos) << r.problems[0].fix;
  }
}

TEST(ExperimentConfig, EveryNonDefaultValueRoundTripsThroughText) {
  ExperimentConfig c;
  c.name = "olv2.run_2";
  c.task = config::Task::OpenLaneV2;
  c.run_dir = "/tmp/runs/x";
  c.model = {"convnext_tiny", 21, 0.25};
  c.model.pretrained = "/weights/convnext_atto.safetensors";
  c.model.pretrained_skip = {"head.", "stages.3."};
  c.data = {DataSource::OpenLaneV2, "/data/openlane-v2", 6, 720, 1280, 3, 4, EvalSplit::Train};
  c.parallel = {Strategy::TpCheckpoint, 4, 2, CheckpointLevel::Stage, Backend::Nccl, Device::Cuda, 3};
  c.optim = {OptimizerKind::Sgd, 0.1234567890123, 1e-4, 0.85, 0.8, 0.95, 1e-6, 0.0, true, 512};
  c.schedule = {1000, 100, 0.0};
  c.train = {4, Precision::Fp16, std::numeric_limits<uint64_t>::max(), 10, 100, 50};
  const ConfigResult r = parse(to_json(c).dump(2));
  EXPECT_TRUE(r.problems.empty()) << describe_problems(r.problems);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.config, c);
  EXPECT_EQ(r.config.world_size(), 8);
}

TEST(ExperimentConfig, IntegralFloatsAreAcceptedForIntegers) {
  const ConfigResult r = parse(R"({"schedule": {"steps": 1e3, "warmup_steps": 10.0}, "train": {"seed": 7.0}})");
  EXPECT_TRUE(r.problems.empty()) << describe_problems(r.problems);
  EXPECT_EQ(r.config.schedule.steps, 1000);
  EXPECT_EQ(r.config.schedule.warmup_steps, 10);
  EXPECT_EQ(r.config.train.seed, 7u);
}

TEST(ExperimentConfig, FiveMistakesAreAllReported) {
  const ConfigResult r = parse(R"({
    "name": "five",
    "model": {"arch": "convnext_huge"},
    "data": {"views": 0},
    "parallel": {"device": "tpu"},
    "optim": {"lr": -0.1},
    "schedule": {"steps": 10, "warmup_steps": 20}
  })");
  EXPECT_EQ(fields(r), (std::vector<std::string>{"data.views", "parallel.device", "optim.lr", "model.arch",
                                                 "schedule.warmup_steps"}));
  ASSERT_EQ(r.problems.size(), 5u);
  EXPECT_EQ(r.problems[0].value, "0");
  EXPECT_EQ(r.problems[0].fix, "use an integer from 1 to 64");
  EXPECT_EQ(r.problems[1].fix, "choose one of: cpu, cuda");
  EXPECT_EQ(r.problems[2].value, "-0.1");
  EXPECT_EQ(r.problems[2].fix, "use a finite number > 0");
  EXPECT_EQ(r.problems[3].value, "\"convnext_huge\"");
  EXPECT_NE(r.problems[3].fix.find("choose one of: convnext_test, convnext_atto"), std::string::npos);
  EXPECT_EQ(r.problems[4].fix, "use at most schedule.steps (10)");
  const std::string text = describe_problems(r.problems);
  EXPECT_NE(text.find("  - optim.lr: -0.1: use a finite number > 0\n"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
}

struct Case {
  const char* json_text;
  const char* field;
  const char* in_fix;  // a part of the fix
};
std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.json_text; }

// One problem at the field, its fix naming what to write; the field keeps its default.
void expect_one_problem(const Case& c) {
  const ConfigResult r = parse(c.json_text);
  const ConfigProblem p = only_problem(r, c.field);
  EXPECT_NE(p.fix.find(c.in_fix), std::string::npos) << p.fix;
  EXPECT_FALSE(p.value.empty());
  EXPECT_EQ(to_json(r.config), to_json(ExperimentConfig{}));
}

class WrongType : public ::testing::TestWithParam<Case> {};
TEST_P(WrongType, NamesTheExpectedType) { expect_one_problem(GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Fields, WrongType,
    ::testing::Values(
        Case{R"({"optim": {"lr": "fast"}})", "optim.lr", "use a finite number > 0, not a string"},
        Case{R"({"data": {"views": "seven"}})", "data.views", "use an integer from 1 to 64, not a string"},
        Case{R"({"data": {"views": 7.5}})", "data.views", "(not a whole number)"},
        Case{R"({"optim": {"scale_lr": "yes"}})", "optim.scale_lr", "use a boolean (true or false), not a string"},
        Case{R"({"optim": {"scale_lr": 1}})", "optim.scale_lr", "boolean"},
        Case{R"({"model": {"arch": 5}})", "model.arch", "use a string, not a number"},
        Case{R"({"name": null})", "name", "use a string, not null"},
        Case{R"({"parallel": {"strategy": ["tp"]}})", "parallel.strategy", "(a string), not an array"},
        Case{R"({"train": {"seed": -1}})", "train.seed", "use an integer from 0 to 18446744073709551615"},
        Case{R"({"train": {"seed": "0"}})", "train.seed", "not a string"},
        Case{R"({"optim": 0.001})", "optim", "use an object of optim settings"},
        Case{R"({"data": [1, 2]})", "data", "not an array"}));

class HugeNumber : public ::testing::TestWithParam<Case> {};
TEST_P(HugeNumber, IsRefused) { expect_one_problem(GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Fields, HugeNumber,
    ::testing::Values(Case{R"({"schedule": {"steps": 2000000000}})", "schedule.steps", "from 1 to 1000000000"},
                      Case{R"({"schedule": {"steps": 99999999999999999999}})", "schedule.steps",
                           "from 1 to 1000000000"},
                      Case{R"({"schedule": {"steps": 18446744073709551615}})", "schedule.steps", "from 1 to"},
                      Case{R"({"data": {"views": 65}})", "data.views", "from 1 to 64"},
                      Case{R"({"data": {"height": 70000}})", "data.height", "from 32 to 65536"},
                      Case{R"({"data": {"width": 65537}})", "data.width", "from 32 to 65536"},
                      Case{R"({"data": {"batch": 10000000}})", "data.batch", "from 1 to 1000000"},
                      Case{R"({"parallel": {"sp": 2000}})", "parallel.sp", "from 1 to 1024"},
                      Case{R"({"parallel": {"dp": 1025}})", "parallel.dp", "from 1 to 1024"},
                      Case{R"({"train": {"accumulation": 4294967297}})", "train.accumulation", "from 1 to 65536"},
                      Case{R"({"parallel": {"threads_per_rank": 2147483648}})", "parallel.threads_per_rank", "to 1024"},
                      Case{R"({"model": {"num_classes": 1e30}})", "model.num_classes", "from 1 to 1000000"},
                      Case{R"({"train": {"seed": 1e30}})", "train.seed", "from 0 to"}));

class OutOfRange : public ::testing::TestWithParam<Case> {};
TEST_P(OutOfRange, IsRefused) { expect_one_problem(GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Fields, OutOfRange,
    ::testing::Values(Case{R"({"optim": {"lr": 0}})", "optim.lr", "> 0"},
                      Case{R"({"optim": {"weight_decay": -0.1}})", "optim.weight_decay", ">= 0"},
                      Case{R"({"model": {"drop_path": 1.0}})", "model.drop_path", "in [0, 1)"},
                      Case{R"({"model": {"drop_path": -0.1}})", "model.drop_path", "in [0, 1)"},
                      Case{R"({"optim": {"beta1": 1}})", "optim.beta1", "in [0, 1)"},
                      Case{R"({"optim": {"beta2": -0.5}})", "optim.beta2", "in [0, 1)"},
                      Case{R"({"optim": {"momentum": 1}})", "optim.momentum", "in [0, 1)"},
                      Case{R"({"optim": {"eps": 0}})", "optim.eps", "> 0"},
                      Case{R"({"optim": {"grad_clip": -1}})", "optim.grad_clip", ">= 0"},
                      Case{R"({"optim": {"base_batch": 0}})", "optim.base_batch", "from 1"},
                      Case{R"({"schedule": {"min_lr_ratio": 1.5}})", "schedule.min_lr_ratio", "in [0, 1]"},
                      Case{R"({"schedule": {"steps": 0}})", "schedule.steps", "from 1"},
                      Case{R"({"train": {"accumulation": 0}})", "train.accumulation", "from 1"},
                      Case{R"({"train": {"log_every": 0}})", "train.log_every", "from 1"},
                      Case{R"({"train": {"checkpoint_every": -1}})", "train.checkpoint_every", "from 0"},
                      Case{R"({"parallel": {"threads_per_rank": 0}})", "parallel.threads_per_rank", "from 1"},
                      Case{R"({"data": {"workers": -1}})", "data.workers", "from 0 to 256"},
                      Case{R"({"data": {"height": 16}})", "data.height", "from 32"}));

class BadChoice : public ::testing::TestWithParam<Case> {};
TEST_P(BadChoice, ListsTheChoices) { expect_one_problem(GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Fields, BadChoice,
    ::testing::Values(
        Case{R"({"task": "detection"})", "task", "choose one of: convnext, openlanev2"},
        Case{R"({"data": {"source": "kitti"}})", "data.source", "choose one of: synthetic, openlanev2"},
        Case{R"({"data": {"eval_split": "test"}})", "data.eval_split", "choose one of: val, train"},
        Case{R"({"parallel": {"strategy": "fsdp"}})", "parallel.strategy",
             "choose one of: none, checkpoint, tp, tp+checkpoint"},
        Case{R"({"parallel": {"checkpoint_level": "layer"}})", "parallel.checkpoint_level",
             "choose one of: block, stage"},
        Case{R"({"parallel": {"backend": "mpi"}})", "parallel.backend", "choose one of: auto, gloo, nccl"},
        Case{R"({"parallel": {"pointwise": "mkl"}})", "parallel.pointwise", "choose one of: cpu, auto, gemm, onednn"},
        Case{R"({"optim": {"name": "adam"}})", "optim.name", "choose one of: adamw, sgd, lamb"},
        Case{R"({"train": {"precision": "fp8"}})", "train.precision", "choose one of: fp32, bf16, fp16"}));

TEST(ExperimentConfig, EdgesOfRangesAreAccepted) {
  const ConfigResult r = parse(R"({"model": {"drop_path": 0.99}, "optim": {"grad_clip": 0, "weight_decay": 0,
      "beta1": 0}, "schedule": {"steps": 5, "warmup_steps": 5, "min_lr_ratio": 1}, "data": {"workers": 0,
      "views": 64, "height": 32, "width": 65536}, "train": {"checkpoint_every": 0, "eval_every": 0}})");
  EXPECT_TRUE(r.problems.empty()) << describe_problems(r.problems);
}

TEST(ExperimentConfig, NanAndInfinityAreProblems) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  json j = json::object();
  j["optim"]["lr"] = nan;
  j["optim"]["weight_decay"] = inf;
  j["optim"]["eps"] = inf;
  j["model"]["drop_path"] = -inf;
  j["schedule"]["min_lr_ratio"] = nan;
  j["schedule"]["steps"] = nan;
  const ConfigResult r = parse_experiment(j);
  std::map<std::string, std::string> values;
  for (const auto& p : r.problems) values[p.field] = p.value;
  EXPECT_EQ(values, (std::map<std::string, std::string>{{"optim.lr", "nan"},
                                                        {"optim.weight_decay", "inf"},
                                                        {"optim.eps", "inf"},
                                                        {"model.drop_path", "-inf"},
                                                        {"schedule.min_lr_ratio", "nan"},
                                                        {"schedule.steps", "nan"}}));
  EXPECT_EQ(r.problems.size(), 6u);
}

TEST(ExperimentConfig, NonObjectTopLevelIsOneProblem) {
  for (const char* text : {"[1, 2]", "\"quickstart\"", "3", "null"}) {
    const ConfigProblem p = only_problem(parse(text), "");
    EXPECT_NE(p.fix.find("must be a JSON object"), std::string::npos) << text;
  }
  EXPECT_EQ(describe_problems(parse("[]").problems).rfind("  - (top level): []: ", 0), 0u);
}

struct Combo {
  std::string strategy;
  int sp;
  bool ok;
};
std::ostream& operator<<(std::ostream& os, const Combo& c) { return os << c.strategy << " sp=" << c.sp; }

class StrategyAndSp : public ::testing::TestWithParam<Combo> {};
TEST_P(StrategyAndSp, AreConsistent) {
  const Combo& c = GetParam();
  const ConfigResult r = parse_experiment({{"parallel", {{"strategy", c.strategy}, {"sp", c.sp}, {"dp", 2}}}});
  if (c.ok) {
    EXPECT_TRUE(r.problems.empty()) << describe_problems(r.problems);
    EXPECT_EQ(r.config.world_size(), 2 * c.sp);
  } else {
    const ConfigProblem p = only_problem(r, "parallel.sp");
    EXPECT_EQ(p.value, std::to_string(c.sp));
    EXPECT_NE(p.fix.find("\"" + c.strategy + "\""), std::string::npos) << p.fix;
    EXPECT_NE(p.fix.find(c.sp == 1 ? "set parallel.sp to 2 or more" : "set parallel.sp to 1"), std::string::npos)
        << p.fix;
  }
}
INSTANTIATE_TEST_SUITE_P(All, StrategyAndSp,
                         ::testing::Values(Combo{"none", 1, true}, Combo{"none", 2, false},
                                           Combo{"checkpoint", 1, true}, Combo{"checkpoint", 4, false},
                                           Combo{"tp", 1, false}, Combo{"tp", 2, true}, Combo{"tp", 8, true},
                                           Combo{"tp+checkpoint", 1, false}, Combo{"tp+checkpoint", 4, true}));

class CrossField : public ::testing::TestWithParam<Case> {};
TEST_P(CrossField, Rule) {
  const Case& c = GetParam();
  const ConfigResult r = parse(c.json_text);
  if (std::string(c.field).empty()) {
    EXPECT_TRUE(r.problems.empty()) << describe_problems(r.problems);
    return;
  }
  const ConfigProblem p = only_problem(r, c.field);
  EXPECT_NE(p.fix.find(c.in_fix), std::string::npos) << p.fix;
}
INSTANTIATE_TEST_SUITE_P(
    Rules, CrossField,
    ::testing::Values(
        Case{R"({"parallel": {"device": "cpu", "backend": "nccl"}})", "parallel.backend", "NCCL needs CUDA"},
        Case{R"({"parallel": {"device": "cuda", "backend": "gloo"}})", "", ""},
        Case{R"({"parallel": {"device": "cuda", "backend": "nccl"}, "train": {"precision": "fp16"}})", "", ""},
        Case{R"({"train": {"precision": "fp16"}})", "train.precision", "use bf16 or fp32 on cpu"},
        Case{R"({"train": {"precision": "bf16"}})", "", ""},
        Case{R"({"task": "openlanev2", "model": {"arch": "resnet18"}})", "", ""},
        Case{R"({"task": "openlanev2", "data": {"source": "openlanev2", "root": "/data/olv2"}})", "", ""},
        Case{R"({"task": "openlanev2", "data": {"source": "openlanev2"}})", "data.root", "set data.root"},
        Case{R"({"task": "openlanev2", "data": {"views": 8}})", "data.views", "7 views (subset A), 6 (subset B)"},
        Case{R"({"task": "openlanev2", "data": {"views": 3}})", "", ""},
        Case{R"({"task": "openlanev2", "data": {"source": "openlanev2", "root": "/d", "views": 8}})", "", ""},
        Case{R"({"data": {"source": "openlanev2", "root": ""}})", "data.root", "or use data.source \"synthetic\""},
        Case{R"({"model": {"arch": "resnet18"}})", "", ""}, Case{R"({"model": {"arch": "regnety_032"}})", "", ""},
        Case{R"({"task": "openlanev2", "model": {"arch": "resnet9"}})", "model.arch", "convnext_xxlarge, resnet_test"},
        Case{R"({"model": {"arch": "resnet50", "drop_path": 0.1}})", "model.drop_path",
             "stochastic depth is for ConvNeXt"},
        Case{R"({"model": {"arch": "convnext_xxlarge"}})", "", ""},
        Case{R"({"schedule": {"steps": 3}})", "schedule.warmup_steps", "at most schedule.steps (3)"},
        Case{R"({"name": "../escape"})", "name", "names the run directory"},
        Case{R"({"name": ""})", "name", "letters, digits"}, Case{R"({"name": "convnext-xl_seed.2"})", "", ""},
        Case{R"({"train": {"eval_every": 10}})", "train.eval_every", "data.source \"openlanev2\""},
        Case{R"({"task": "openlanev2", "train": {"eval_every": 10}})", "train.eval_every",
             "or set train.eval_every to 0"},
        Case{R"({"task": "openlanev2", "data": {"source": "openlanev2", "root": "/d", "eval_split": "train"},
                 "train": {"eval_every": 10}})",
             "", ""}));

TEST(ExperimentConfig, RulesBetweenFieldsSkipFieldsThatAlreadyHaveAProblem) {
  // sp is refused on its own; no second, confusing problem about the strategy.
  EXPECT_EQ(fields(parse(R"({"parallel": {"strategy": "none", "sp": "two"}})")),
            std::vector<std::string>{"parallel.sp"});
  EXPECT_EQ(fields(parse(R"({"parallel": {"strategy": "fsdp", "sp": 1}})")),
            std::vector<std::string>{"parallel.strategy"});
  EXPECT_EQ(fields(parse(R"({"task": "openlanev2", "data": 3})")), std::vector<std::string>{"data"});
}

struct Typo {
  const char* json_text;
  const char* warning;
};
std::ostream& operator<<(std::ostream& os, const Typo& t) { return os << t.json_text; }

class UnknownKey : public ::testing::TestWithParam<Typo> {};
TEST_P(UnknownKey, WarnsWithTheClosestKnownKey) {
  const ConfigResult r = parse(GetParam().json_text);
  EXPECT_TRUE(r.problems.empty()) << describe_problems(r.problems);
  EXPECT_EQ(r.warnings, std::vector<std::string>{GetParam().warning});
  EXPECT_EQ(r.config, ExperimentConfig{});  // ignored
}
INSTANTIATE_TEST_SUITE_P(
    Keys, UnknownKey,
    ::testing::Values(
        Typo{R"({"optim": {"learning_rate": 0.1}})",
             "unknown key 'optim.learning_rate' ignored; did you mean 'optim.lr'?"},
        Typo{R"({"schedule": {"stpes": 10}})", "unknown key 'schedule.stpes' ignored; did you mean 'schedule.steps'?"},
        Typo{R"({"data": {"batch_size": 2}})", "unknown key 'data.batch_size' ignored; did you mean 'data.batch'?"},
        Typo{R"({"model": {"classes": 5}})", "unknown key 'model.classes' ignored; did you mean 'model.num_classes'?"},
        Typo{R"({"optim": {"wd": 0.1}})", "unknown key 'optim.wd' ignored; did you mean 'optim.weight_decay'?"},
        Typo{R"({"train": {"precison": "bf16"}})",
             "unknown key 'train.precison' ignored; did you mean 'train.precision'?"},
        Typo{R"({"optimizer": {"lr": 0.1}})", "unknown key 'optimizer' ignored; did you mean 'optim'?"},
        Typo{R"({"lr": 0.1})", "unknown key 'lr' ignored; did you mean 'optim.lr'?"},
        Typo{R"({"model": {"batch": 4}})", "unknown key 'model.batch' ignored; did you mean 'data.batch'?"},
        Typo{R"({"optim.lr": 0.1})", "unknown key 'optim.lr' ignored; nest it: \"optim\": {\"lr\": ...}"},
        Typo{R"({"comment": "try 7 views"})", "unknown key 'comment' ignored"}));

TEST(ExperimentConfig, UnknownKeysDoNotHideProblemsOrKnownValues) {
  const ConfigResult r =
      parse(R"({"optim": {"learning_rate": 0.1, "lr": 0.5, "eps": -1}, "extra": {"deep": {"x": 1}}})");
  EXPECT_EQ(fields(r), std::vector<std::string>{"optim.eps"});
  EXPECT_EQ(r.warnings.size(), 2u);  // the nested unknown section is one warning
  EXPECT_EQ(r.config.optim.lr, 0.5);
}

TEST(ExperimentConfig, DescribeProblemsFormatsOneLineEach) {
  EXPECT_EQ(describe_problems({{"optim.lr", "0", "use a finite number > 0"}, {"", "[]", "use an object"}}),
            "  - optim.lr: 0: use a finite number > 0\n  - (top level): []: use an object");
  EXPECT_EQ(describe_problems({}), "");
}

}  // namespace
}  // namespace halo::config
