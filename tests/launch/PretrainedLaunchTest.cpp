// model.pretrained through the real CLI: timm's weights (the .venv's timm) train at sp=2 and
// export back unchanged at a negligible learning rate, the history keeps the file's SHA-256,
// and a file of another architecture is refused before anything is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <torch/torch.h>

#include "RunHelpers.h"
#include "io/TensorFile.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;

// timm's convnext_atto (4 classes) and convnext_femto as safetensors, with their SHA-256.
void write_timm_weights(const std::string& dir) {
  const std::string script = dir + "/make.py";
  std::ofstream(script) << R"(import sys, hashlib, torch, timm
from safetensors.torch import save_file
d = sys.argv[1]
torch.manual_seed(0)
for name in ['convnext_atto', 'convnext_femto']:
    m = timm.create_model(name, pretrained=False, num_classes=4)
    save_file({k: v.contiguous() for k, v in m.state_dict().items()}, f'{d}/{name}.safetensors')
    with open(f'{d}/{name}.sha256', 'w') as f:
        f.write(hashlib.sha256(open(f'{d}/{name}.safetensors', 'rb').read()).hexdigest())
)";
  const CliResult py = run_command(std::string(HALO_PYTHON) + " " + script + " " + dir);
  ASSERT_EQ(py.code, 0) << py.out;
}

TEST(PretrainedLaunch, TimmWeightsTrainAtSp2AndExportBackUnchanged) {
  const std::string dir = fresh_dir("pretrained");
  write_timm_weights(dir);
  const std::string weights = dir + "/convnext_atto.safetensors", db = dir + "/h.db";
  const std::string exp = write_experiment(dir, {{"model", {{"arch", "convnext_atto"}, {"pretrained", weights}}},
                                                 {"data", {{"views", 1}}},
                                                 {"optim", {{"lr", 1e-12}, {"weight_decay", 0.0}}},
                                                 {"schedule", {{"steps", 2}}}});
  CliResult run = run_halo("launch --no-progress " + exp + " --db " + db);
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("model.pretrained " + weights + ": 128 tensor(s) load"), std::string::npos) << run.out;
  CliResult ex = run_halo("export " + dir + "/run/checkpoints/step-000002.pt -o " + dir + "/out.safetensors");
  ASSERT_EQ(ex.code, 0) << ex.out;
  const io::NamedTensors in = io::load_safetensors(weights), out = io::load_safetensors(dir + "/out.safetensors");
  ASSERT_EQ(in.size(), out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(in[i].first, out[i].first);
    EXPECT_LE((in[i].second - out[i].second).abs().max().item<double>(), 1e-7) << in[i].first;
  }
  // The history names the file and its SHA-256 (hashlib's).
  CliResult show = run_halo("runs show 1 --json --db " + db);
  ASSERT_EQ(show.code, 0) << show.out;
  const auto j = nlohmann::json::parse(show.out);
  bool found = false;
  for (const auto& a : j["artifacts"])
    if (a["kind"] == "pretrained") {
      found = true;
      EXPECT_EQ(a["path"], weights);
      EXPECT_EQ(a["sha256"], file_text(dir + "/convnext_atto.sha256"));
    }
  EXPECT_TRUE(found) << show.out;
  EXPECT_EQ(j["config"]["model"]["pretrained"], weights);
}

TEST(PretrainedLaunch, AFileOfAnotherArchitectureIsRefusedAndNothingIsWritten) {
  const std::string dir = fresh_dir("pretrained-bad");
  write_timm_weights(dir);
  const std::string weights = dir + "/convnext_femto.safetensors", db = dir + "/h.db";
  const std::string exp = write_experiment(
      dir, {{"model", {{"arch", "convnext_atto"}, {"pretrained", weights}}}, {"data", {{"views", 1}}}});
  const auto before = files_under(dir);
  CliResult run = run_halo("launch --no-progress " + exp + " --db " + db);
  EXPECT_NE(run.code, 0);
  for (const char* want : {"does not fit the model", "wrong shape",
                           "stages.0.blocks.0.conv_dw.weight: (48, 1, 7, 7) in the file, (40, 1, 7, 7) in the model",
                           "model.pretrained_skip"})
    EXPECT_NE(run.out.find(want), std::string::npos) << "no '" << want << "' in:\n" << run.out;
  EXPECT_NE(run.out.find(weights), std::string::npos) << run.out;
  EXPECT_EQ(files_under(dir), before);  // no run folder, no history
  // A missing file is named too.
  CliResult missing = run_halo("launch --no-progress " + exp + " --db " + db + " --set model.pretrained=" + dir +
                               "/nothing.safetensors");
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.out.find(dir + "/nothing.safetensors is not a file"), std::string::npos) << missing.out;
  EXPECT_EQ(files_under(dir), before);
}

}  // namespace
}  // namespace halo::testing
