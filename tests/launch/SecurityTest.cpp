// Security of runs: user strings reach the ranks as argv (never a shell), and checkpoints
// load as data only: a forged pickle global (os.system via REDUCE) and TorchScript methods
// (__setstate__) in a checkpoint are refused by both loaders, `halo launch --resume` and
// `halo export`, without running anything.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "RunHelpers.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;

// The text in single quotes for the test's shell (popen).
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

TEST(Security, ShellMetacharactersInUserStringsAreNeverRun) {
  const std::string dir = fresh_dir("metachar");
  const std::string run =
      dir + "/run $(touch " + dir + "/pwned1) `touch " + dir + "/pwned2`; touch " + dir + "/pwned3 #";
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 2}}}});
  CliResult r = run_halo("launch --no-progress " + exp + " --set " + quoted("run_dir=" + run));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(run + "/events.jsonl"));  // the folder has the literal name
  EXPECT_EQ(read_events(run, "done", -1).size(), 2u);
  for (const char* f : {"/pwned1", "/pwned2", "/pwned3"}) {
    EXPECT_FALSE(fs::exists(dir + f)) << f;
  }
  // A run name with metacharacters is refused before anything starts.
  CliResult bad = run_halo("launch --no-progress " + exp + " --set " + quoted("name=$(touch " + dir + "/pwned4)"));
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("  - name: "), std::string::npos) << bad.out;
  EXPECT_FALSE(fs::exists(dir + "/pwned4"));
}

// Python (the project's .venv) forging two checkpoints next to a real one.
const char* kForge = R"(
import os, sys, zipfile, torch
real, marker, out_pickle, out_script = sys.argv[1:5]

class Evil:
    def __reduce__(self):
        return (os.system, ('touch ' + marker,))

import pickle
payload = pickle.dumps(Evil(), protocol=2)
assert b'csystem' in payload or b'system' in payload
with zipfile.ZipFile(real) as src, zipfile.ZipFile(out_pickle, 'w') as dst:
    names = src.namelist()
    assert any(n.endswith('/data.pkl') for n in names), names
    for n in names:
        dst.writestr(n, payload if n.endswith('/data.pkl') else src.read(n))

class WithSetstate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.zeros(2)
    def forward(self, x):
        return x + self.w
    @torch.jit.export
    def __getstate__(self):
        return (self.w, self.training)
    @torch.jit.export
    def __setstate__(self, state: tuple[torch.Tensor, bool]):
        self.w = state[0] + 1
        self.training = state[1]

torch.jit.save(torch.jit.script(WithSetstate()), out_script)
)";

TEST(Security, ForgedCheckpointsAreRefusedWithoutRunningAnything) {
  const std::string dir = fresh_dir("forged"), run = dir + "/run";
  CliResult r = run_halo("launch --no-progress " + write_experiment(dir, {{"schedule", {{"steps", 2}}}}));
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string real = run + "/checkpoints/step-000002.pt";
  const std::string marker = dir + "/executed", evil_pickle = dir + "/evil-pickle.pt",
                    evil_script = dir + "/evil-script.pt";
  std::ofstream(dir + "/forge.py") << kForge;
  CliResult py = run_command(std::string(HALO_PYTHON) + " " + dir + "/forge.py " + real + " " + marker + " " +
                             evil_pickle + " " + evil_script);
  ASSERT_EQ(py.code, 0) << py.out;
  // halo export: the GLOBAL posix.system is unknown to torch::jit's unpickler (it resolves
  // TorchScript types only and imports nothing); the __setstate__ method is refused by name.
  CliResult ex1 = run_halo("export " + evil_pickle + " -o " + dir + "/a.safetensors");
  EXPECT_NE(ex1.code, 0);
  EXPECT_NE(ex1.out.find(evil_pickle + " is not a Halo checkpoint"), std::string::npos) << ex1.out;
  CliResult ex2 = run_halo("export " + evil_script + " -o " + dir + "/b.safetensors");
  EXPECT_NE(ex2.code, 0);
  EXPECT_NE(ex2.out.find(evil_script + " is not a data-only checkpoint: record"), std::string::npos) << ex2.out;
  EXPECT_NE(ex2.out.find("defines TorchScript methods"), std::string::npos) << ex2.out;
  // halo launch --resume (Trainer::load_checkpoint) takes the run's latest checkpoint.
  for (const std::string& forged : {evil_pickle, evil_script}) {
    fs::copy_file(forged, real, fs::copy_options::overwrite_existing);
    CliResult res = run_halo("launch --no-progress --resume " + run);
    EXPECT_NE(res.code, 0);
    EXPECT_NE(res.out.find(real + " is not a"), std::string::npos) << res.out;
  }
  EXPECT_FALSE(fs::exists(marker)) << "a forged checkpoint ran code";
  // The forged pickle really does run code where pickles are executed (plain Python).
  CliResult control =
      run_command(std::string(HALO_PYTHON) + " -c \"import zipfile,pickle,sys; z=zipfile.ZipFile('" + evil_pickle +
                  "'); pickle.loads(z.read([n for n in z.namelist() if n.endswith('/data.pkl')][0]))\"");
  EXPECT_EQ(control.code, 0) << control.out;
  EXPECT_TRUE(fs::exists(marker)) << "the forged pickle is not a real attack";
}

}  // namespace
}  // namespace halo::testing
