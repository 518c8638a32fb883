// `halo export` read by the real reference clients: Python safetensors and
// torch.load(weights_only=True) read the files, and timm's convnext_atto and resnet18 load the
// safetensors with strict=True and give Halo's logits for the same input (fp32, 1e-5). An
// export never writes over its input, a checkpoint or the history; an existing output needs --force.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <torch/torch.h>

#include "RunHelpers.h"
#include "io/TensorFile.h"
#include "model/Backbone.h"
#include "parallel/ShardedTensor.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;

class ExportTimm : public ::testing::TestWithParam<std::string> {};

TEST_P(ExportTimm, TimmLoadsTheWeightsAndGivesHalosLogits) {
  const std::string arch = GetParam();
  const std::string dir = fresh_dir("export-" + arch);
  const std::string exp =
      write_experiment(dir, {{"model", {{"arch", arch}}}, {"schedule", {{"steps", 2}}}, {"data", {{"views", 1}}}});
  CliResult run = run_halo("launch --no-progress " + exp);
  ASSERT_EQ(run.code, 0) << run.out;
  const std::string ckpt = dir + "/run/checkpoints/step-000002.pt";
  ASSERT_TRUE(fs::exists(ckpt));
  CliResult st = run_halo("export " + ckpt + " -o " + dir + "/model.safetensors --json");
  ASSERT_EQ(st.code, 0) << st.out;
  CliResult pt = run_halo("export " + ckpt + " -o " + dir + "/model.pt --format torch");
  ASSERT_EQ(pt.code, 0) << pt.out;
  EXPECT_TRUE(fs::exists(dir + "/model.safetensors.json"));

  // Halo's logits for a fixed input, from the exported weights.
  std::map<std::string, std::string> meta;
  io::NamedTensors weights = io::load_safetensors(dir + "/model.safetensors", &meta);
  EXPECT_EQ(meta["arch"], arch);
  EXPECT_NE(meta["config"].find("\"num_classes\":4"), std::string::npos) << meta["config"];
  std::shared_ptr<model::BackboneImpl> m = model::make_backbone(arch, 4);
  {
    torch::NoGradGuard ng;
    auto params = m->named_parameters();
    auto buffers = m->named_buffers();  // a ResNet's BatchNorm statistics
    ASSERT_EQ(weights.size(), params.size() + buffers.size());
    for (auto& [name, t] : weights) (params.contains(name) ? params[name] : buffers[name]).copy_(t);
  }
  m->eval();
  torch::manual_seed(11);
  torch::Tensor input = torch::randn({2, 3, 64, 128});
  torch::Tensor logits;
  {
    torch::NoGradGuard ng;
    logits = m->forward(parallel::shard_evenly(input, parallel::Communicator::solo()));
  }
  io::save_safetensors(dir + "/check.safetensors", {{"input", input}, {"logits", logits}}, {});

  const std::string script = dir + "/check.py";
  std::ofstream(script) << R"(import sys, torch, timm
from safetensors.torch import load_file
from safetensors import safe_open
d = sys.argv[1]
sd = load_file(d + '/model.safetensors')
m = timm.create_model(sys.argv[2], pretrained=False, num_classes=4)
m.load_state_dict(sd, strict=True)
m.eval()
chk = load_file(d + '/check.safetensors')
with torch.no_grad():
    out = m(chk['input'])
err = ((out - chk['logits']).abs().max() / chk['logits'].abs().max()).item()
sd2 = torch.load(d + '/model.pt', weights_only=True)
assert list(sd2.keys()) == list(m.state_dict().keys()), 'torch file keys differ from timm order'
assert all(torch.equal(sd[k], sd2[k]) for k in sd), 'torch file differs from safetensors'
with safe_open(d + '/model.safetensors', 'pt') as f:
    assert 'config' in f.metadata()
print('max relative logit error', err)
sys.exit(0 if err < 1e-5 else 3)
)";
  const CliResult py = run_command(std::string(HALO_PYTHON) + " " + script + " " + dir + " " + arch);
  EXPECT_EQ(py.code, 0) << py.out;
  EXPECT_NE(py.out.find("max relative logit error"), std::string::npos) << py.out;
}

INSTANTIATE_TEST_SUITE_P(Archs, ExportTimm, ::testing::Values("convnext_atto", "resnet18"));

TEST(Export, RefusesWhatIsNotACheckpoint) {
  const std::string dir = fresh_dir("export-bad");
  std::ofstream(dir + "/junk.pt") << "not a checkpoint";
  CliResult r = run_halo("export " + dir + "/junk.pt -o " + dir + "/out.safetensors");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("junk.pt"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/out.safetensors"));
  CliResult missing = run_halo("export " + dir + "/none.pt -o " + dir + "/out.safetensors");
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.out.find("does not exist"), std::string::npos) << missing.out;
}

TEST(Export, NeverOverwritesItsInputACheckpointOrTheHistory) {
  const std::string dir = fresh_dir("export-refuse"), db = dir + "/history.db";
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 2}}}, {"train", {{"checkpoint_every", 1}}}});
  CliResult run = run_halo("launch --no-progress --db " + db + " " + exp);
  ASSERT_EQ(run.code, 0) << run.out;
  const std::string ckpt = dir + "/run/checkpoints/step-000002.pt", older = dir + "/run/checkpoints/step-000001.pt";
  ASSERT_TRUE(fs::exists(older));
  const auto before = files_under(dir);
  for (const auto& [target, why] :
       {std::pair{ckpt, "it is the checkpoint being exported"}, std::pair{older, "it is a resume checkpoint"},
        std::pair{db, "it is the run history"}}) {
    for (const char* force : {"", " --force"}) {
      CliResult r = run_halo("export " + ckpt + " -o " + target + " --db " + db + force);
      EXPECT_EQ(r.code, 2) << r.out;
      EXPECT_NE(r.out.find("refusing to write " + target + ": " + why), std::string::npos) << r.out;
    }
  }
  EXPECT_EQ(files_under(dir), before);  // a refused export changes nothing on disk
  const std::string out = dir + "/model.safetensors";
  ASSERT_EQ(run_halo("export " + ckpt + " -o " + out + " --db " + db).code, 0);
  const std::string exported = file_text(out);
  CliResult again = run_halo("export " + older + " -o " + out + " --db " + db);
  EXPECT_EQ(again.code, 2) << again.out;
  EXPECT_NE(again.out.find(out + " already exists"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("pass --force"), std::string::npos) << again.out;
  EXPECT_EQ(file_text(out), exported);
  CliResult forced = run_halo("export " + older + " -o " + out + " --force --db " + db);
  EXPECT_EQ(forced.code, 0) << forced.out;
  EXPECT_NE(file_text(out), exported);  // step 1's weights now
}

}  // namespace
}  // namespace halo::testing
