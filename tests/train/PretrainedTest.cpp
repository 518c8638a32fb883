// model.pretrained: the key/shape/dtype match as a pure function, and real timm weights (the
// timm package of the project's .venv) giving timm's logits in Halo, unsharded and over sp=2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <torch/torch.h>

#include "arch/ConvNeXtVariant.h"
#include "config/ExperimentConfig.h"
#include "io/TensorFile.h"
#include "model/ConvNeXt.h"
#include "parallel/Communicator.h"
#include "parallel/ShardedTensor.h"
#include "support/RankHarness.h"
#include "train/Pretrained.h"
#include "train/TaskFactory.h"
#include "util/Error.h"

namespace halo::train {
namespace {

namespace fs = std::filesystem;

TensorSlot slot(std::string name, std::vector<int64_t> shape, bool floating = true) {
  return {std::move(name), std::move(shape), floating ? "float" : "long", floating};
}

std::string match_error(const std::vector<TensorSlot>& model, const std::vector<TensorSlot>& file,
                        const std::vector<std::string>& skip = {}, const std::string& prefix = "") {
  try {
    match_pretrained(model, file, skip, prefix, "w.safetensors");
  } catch (const util::Error& e) {
    return e.problem() + "\n" + e.hint();
  }
  return "";
}

const std::vector<TensorSlot> kModel = {slot("stem.0.weight", {8, 3, 4, 4}), slot("stem.0.bias", {8}),
                                        slot("head.fc.weight", {4, 8}), slot("head.fc.bias", {4})};

TEST(PretrainedMatch, AnExactFileLoadsEveryTensor) {
  const PretrainedMatch m = match_pretrained(kModel, kModel, {}, "", "w.safetensors");
  EXPECT_EQ(m.load.size(), kModel.size());
  EXPECT_TRUE(m.reinitialised.empty() && m.skipped.empty() && m.kept.empty());
}

TEST(PretrainedMatch, AClassifierOfAnotherClassCountIsReinitialised) {
  std::vector<TensorSlot> file = kModel;
  file[2].shape = {1000, 8}, file[3].shape = {1000};
  const PretrainedMatch m = match_pretrained(kModel, file, {}, "", "w.safetensors");
  EXPECT_EQ(m.load.size(), 2u);
  EXPECT_EQ(m.reinitialised, (std::vector<std::string>{"head.fc.weight", "head.fc.bias"}));
  // Any other shape difference is an error, not a re-initialisation.
  file[0].shape = {8, 3, 2, 2};
  EXPECT_NE(match_error(kModel, file).find("stem.0.weight: (8, 3, 2, 2) in the file, (8, 3, 4, 4) in the model"),
            std::string::npos);
}

TEST(PretrainedMatch, TimmBackboneKeysFillTheBackboneAndTheRestStartsAsInitialised) {
  const std::vector<TensorSlot> model = {slot("img_backbone.stem.0.weight", {8, 3, 4, 4}),
                                         slot("img_backbone.stem.0.bias", {8}), slot("img_neck.proj.weight", {4, 8})};
  const std::vector<TensorSlot> timm = {slot("stem.0.weight", {8, 3, 4, 4}), slot("stem.0.bias", {8}),
                                        slot("head.fc.weight", {1000, 8}), slot("head.norm.weight", {8})};
  const PretrainedMatch m = match_pretrained(model, timm, {}, "img_backbone.", "w.safetensors");
  EXPECT_EQ(m.load, (std::vector<std::pair<std::string, std::string>>{{"img_backbone.stem.0.weight", "stem.0.weight"},
                                                                      {"img_backbone.stem.0.bias", "stem.0.bias"}}));
  EXPECT_EQ(m.skipped, (std::vector<std::string>{"head.fc.weight", "head.norm.weight"}));
  EXPECT_EQ(m.kept, std::vector<std::string>{"img_neck.proj.weight"});
  // A file of the whole model (its own names) must fill all of it.
  const std::vector<TensorSlot> whole = {model[0], model[1]};
  EXPECT_NE(match_error(model, whole, {}, "img_backbone.").find("missing from the file (1):\n    img_neck.proj.weight"),
            std::string::npos);
}

TEST(PretrainedMatch, SkipPrefixesDropFileKeysAndLeaveModelKeysAsInitialised) {
  std::vector<TensorSlot> file = {kModel[0], kModel[1], slot("head.fc.weight", {4, 9}), slot("head.fc.bias", {5})};
  EXPECT_NE(match_error(kModel, file), "");
  const PretrainedMatch m = match_pretrained(kModel, file, {"head."}, "", "w.safetensors");
  EXPECT_EQ(m.load.size(), 2u);
  EXPECT_EQ(m.skipped, (std::vector<std::string>{"head.fc.weight", "head.fc.bias"}));
  // Skipping what the model needs from nowhere else is allowed: it stays as initialised.
  const PretrainedMatch none = match_pretrained(kModel, {}, {"stem.", "head."}, "", "w.safetensors");
  EXPECT_TRUE(none.load.empty());
}

TEST(PretrainedMatch, EveryMismatchIsListedAtOnceWithAHint) {
  const std::vector<TensorSlot> file = {slot("stem.0.weight", {8, 3, 2, 2}), slot("stem.0.bias", {8}, false),
                                        slot("head.fc.weight", {4, 8}), slot("stages.9.extra", {3})};
  const std::string e = match_error(kModel, file);
  for (const char* want :
       {"model.pretrained w.safetensors does not fit the model", "missing from the file (1):", "head.fc.bias (4)",
        "in the file but not in the model (1):", "stages.9.extra (3)",
        "wrong shape (1):", "stem.0.weight: (8, 3, 2, 2) in the file, (8, 3, 4, 4) in the model",
        "wrong dtype (1):", "stem.0.bias: long in the file, float in the model", "model.pretrained_skip"})
    EXPECT_NE(e.find(want), std::string::npos) << "no '" << want << "' in:\n" << e;
}

TEST(PretrainedFile, WhatIsNotAWeightFileIsRefusedNamingIt) {
  const fs::path dir = fs::temp_directory_path() / ("halo-pretrained-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "notes.txt") << "not weights";
  std::ofstream(dir / "fake.zip") << "PK\x03\x04 this is no torch file";
  for (const fs::path& p : {dir / "missing.safetensors", dir, dir / "notes.txt", dir / "fake.zip"}) {
    try {
      read_weight_file(p.string());
      ADD_FAILURE() << p << " was read";
    } catch (const util::Error& e) {
      EXPECT_NE(e.problem().find(p.string()), std::string::npos) << e.problem();
    }
  }
  fs::remove_all(dir);
}

// --- real timm weights --------------------------------------------------------------------

constexpr int kClasses = 4;

// timm's convnext_atto (random init, seed 0) saved with safetensors and torch.save, and
// timm's logits for a fixed input.
void write_timm_files(const std::string& dir) {
  const std::string script = dir + "/make.py";
  std::ofstream(script) << R"(import sys, torch, timm
from safetensors.torch import save_file
d = sys.argv[1]
torch.manual_seed(0)
m = timm.create_model('convnext_atto', pretrained=False, num_classes=4).eval()
sd = {k: v.contiguous() for k, v in m.state_dict().items()}
save_file(sd, d + '/timm.safetensors')
torch.save(dict(m.state_dict()), d + '/timm.pt')
torch.save(m.state_dict(), d + '/ordered.pt')
x = torch.randn(2, 3, 64, 128)
with torch.no_grad():
    save_file({'input': x, 'logits': m(x)}, d + '/ref.safetensors')
)";
  const std::string cmd = std::string(HALO_PYTHON) + " " + script + " " + dir + " > " + dir + "/make.log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "see " << dir << "/make.log";
}

// Halo's logits for the reference input from `file`, over the given sp group.
at::Tensor halo_logits(const std::string& file, const std::string& dir, std::shared_ptr<parallel::Communicator> sp) {
  model::ConvNeXt m(*arch::find_convnext_variant("convnext_atto"), kClasses);
  const PretrainedResult r = load_pretrained(*m, file, {}, "");
  EXPECT_EQ(r.loaded, m->named_parameters().size());
  m->eval();
  const io::NamedTensors ref = io::load_safetensors(dir + "/ref.safetensors");
  torch::NoGradGuard no_grad;
  return m->forward(parallel::shard_evenly(ref[0].second, sp));  // "input" sorts first
}

double relative_error(const at::Tensor& got, const std::string& dir) {
  const at::Tensor want = io::load_safetensors(dir + "/ref.safetensors")[1].second;  // "logits"
  return ((got - want).abs().max() / want.abs().max()).item<double>();
}

TEST(Pretrained, TimmWeightsGiveTimmsLogitsUnshardedAndOverTwoRanks) {
  testing::RankHarness h(2);
  const std::string dir = h.dir();
  if (h.is_rank()) {
    auto mesh = h.join({1, 2});
    for (const char* file : {"timm.safetensors", "timm.pt"}) {
      const at::Tensor logits = halo_logits(dir + "/" + file, dir, mesh->sp_ptr());
      if (h.rank() == 0) io::save_safetensors(dir + "/sp2-" + file + ".safetensors", {{"logits", logits}}, {});
    }
    return;
  }
  write_timm_files(dir);
  for (const char* file : {"timm.safetensors", "timm.pt"}) {
    const double err = relative_error(halo_logits(dir + "/" + file, dir, parallel::Communicator::solo()), dir);
    EXPECT_LE(err, 1e-5) << file << ", one process";
  }
  h.run_ranks();
  for (const char* file : {"timm.safetensors", "timm.pt"}) {
    const at::Tensor sp2 = io::load_safetensors(dir + "/sp2-" + file + ".safetensors")[0].second;
    EXPECT_LE(relative_error(sp2, dir), 1e-5) << file << ", sp=2";
  }
}

TEST(Pretrained, AnOrderedDictTorchFileIsRefusedWithItsConversion) {
  testing::RankHarness h(1);
  write_timm_files(h.dir());
  try {
    read_weight_file(h.dir() + "/ordered.pt");
    ADD_FAILURE() << "an OrderedDict file was read";
  } catch (const util::Error& e) {
    EXPECT_NE(e.problem().find("ordered.pt holds an OrderedDict"), std::string::npos) << e.problem();
    EXPECT_NE(e.hint().find("save_file("), std::string::npos) << e.hint();
  }
}

TEST(Pretrained, TheOpenLaneModelTakesATimmBackbone) {
  testing::RankHarness h(1);
  const std::string dir = h.dir();
  write_timm_files(dir);
  config::ExperimentConfig cfg;
  cfg.task = config::Task::OpenLaneV2;
  cfg.model.arch = "convnext_atto";
  cfg.parallel.sp = 1;
  const BareModel bare = make_model(cfg);
  EXPECT_EQ(bare.backbone_prefix, "img_backbone.");
  const PretrainedResult r = load_pretrained(*bare.module, dir + "/timm.safetensors", {}, bare.backbone_prefix);
  EXPECT_FALSE(r.match.kept.empty());  // the neck, view transform and heads
  EXPECT_EQ(r.match.skipped,
            (std::vector<std::string>{"head.fc.bias", "head.fc.weight", "head.norm.bias", "head.norm.weight"}));
  auto params = bare.module->named_parameters();
  size_t compared = 0;
  for (const auto& [name, t] : io::load_safetensors(dir + "/timm.safetensors")) {
    if (name.starts_with("head.")) continue;
    ASSERT_TRUE(params.contains("img_backbone." + name)) << name;
    EXPECT_TRUE(torch::equal(params["img_backbone." + name], t)) << name;
    ++compared;
  }
  EXPECT_EQ(compared, r.loaded);
}

}  // namespace
}  // namespace halo::train
