// `halo launch --resume`: the highest step that loads, past a damaged latest one (with a
// warning), stray names ignored, killed writes' temporaries removed; a changed experiment is
// refused or explained before anything is written; a finished run says how to go on.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "RunHelpers.h"
#include "launch/ResumePoint.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;

// A 6-step run with checkpoints at 3 and 6; returns its folder and the losses of all 6 steps.
std::pair<std::string, std::vector<double>> finished_run(const std::string& tag) {
  const std::string dir = fresh_dir(tag);
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 6}}}, {"train", {{"checkpoint_every", 3}}}});
  CliResult r = run_halo("launch --no-progress " + exp);
  EXPECT_EQ(r.code, 0) << r.out;
  const std::string run = dir + "/run";
  auto l = losses(run);
  fs::rename(run + "/events.jsonl", run + "/events.first.jsonl");
  return {run, l};
}

void truncate_to_half(const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); }

TEST(Resume, ADamagedLatestCheckpointFallsBackToThePreviousOneWithAWarning) {
  const auto [run, full] = finished_run("resume-damaged");
  ASSERT_EQ(full.size(), 6u);
  const std::string ckpt = run + "/checkpoints/";
  truncate_to_half(ckpt + "step-000006.pt");                               // torn, e.g. copied in part
  std::ofstream(ckpt + "step-abc.pt") << "not a checkpoint";               // a stray name, ignored
  std::ofstream(ckpt + "step-000002.pt.bak") << "not a checkpoint";        // likewise
  const std::string stale = ckpt + ".step-000009.pt.tmp-4242-0-0badcafe";  // a killed write's temporary
  std::ofstream(stale) << "half a checkpoint";
  CliResult r = run_halo("launch --no-progress --resume " + run);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("halo: warning: checkpoint " + ckpt + "step-000006.pt is damaged: "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("resuming from the previous checkpoint, " + ckpt + "step-000003.pt (step 3)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("removed " + stale + " (left by a killed write)"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(ckpt + "step-abc.pt"));
  const auto tail = losses(run);
  ASSERT_EQ(tail.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(tail[i], full[3 + i], 1e-6 * std::abs(full[3 + i])) << "step " << 3 + i;
}

TEST(Resume, WhenEveryCheckpointIsDamagedEachIsNamed) {
  const auto [run, full] = finished_run("resume-alldamaged");
  const std::string ckpt = run + "/checkpoints/";
  truncate_to_half(ckpt + "step-000006.pt");
  std::ofstream(ckpt + "step-000003.pt", std::ios::trunc) << "garbage";
  const std::string config_before = file_text(run + "/config.json");
  CliResult r = run_halo("launch --no-progress --resume " + run);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("run folder " + run + ": no checkpoint loads:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  - checkpoint " + ckpt + "step-000006.pt is damaged: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  - checkpoint " + ckpt + "step-000003.pt is damaged: "), std::string::npos) << r.out;
  EXPECT_EQ(file_text(run + "/config.json"), config_before);
  EXPECT_FALSE(fs::exists(run + "/events.jsonl"));
}

TEST(Resume, CheckpointsAreOrderedByStepNumberAndStrayNamesIgnored) {
  const std::string dir = fresh_dir("resume-order");
  fs::create_directories(dir + "/checkpoints");
  for (const char* name : {"step-000002.pt", "step-999999.pt", "step-1000002.pt", "step-abc.pt", "step-7.pt.bak",
                           ".step-000003.pt.tmp-17-0-00c0ffee"})
    std::ofstream(dir + "/checkpoints/" + name) << "x";
  std::vector<std::string> warnings;
  const auto files = launch::list_checkpoints(dir, warnings);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].step, 1000002);  // as text, step-999999.pt would sort after it
  EXPECT_EQ(files[1].step, 999999);
  EXPECT_EQ(files[2].step, 2);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(".step-000003.pt.tmp-17-0-00c0ffee (left by a killed write)"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir + "/checkpoints/step-abc.pt"));
}

TEST(Resume, ARefusedChangeWritesNothingAndThePlainResumeStillWorks) {
  const auto [run, full] = finished_run("resume-refused");
  const auto before = files_under(run);
  CliResult r = run_halo("launch --no-progress --resume " + run +
                         " --set model.arch=convnext_atto --set data.width=256 --set schedule.steps=9");
  EXPECT_EQ(r.code, 2) << r.out;
  for (const char* want : {"with a changed experiment", "nothing was changed",
                           "model.arch: \"convnext_test\" -> "
                           "\"convnext_atto\": the checkpoint's weights are of this model",
                           "data.width: 128 -> 256", "may change on resume: optim.*"})
    EXPECT_NE(r.out.find(want), std::string::npos) << "no '" << want << "' in:\n" << r.out;
  EXPECT_EQ(files_under(run), before);  // config.json included
  // What may change goes through, with a note where it alters the run.
  CliResult ok = run_halo("launch --no-progress --resume " + run + " --set schedule.steps=8 --set optim.lr=0.001 " +
                          "--set parallel.sp=1 --set parallel.strategy=none");
  ASSERT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("resuming with parallel.sp 2 -> 1: the checkpoint holds full tensors"), std::string::npos)
      << ok.out;
  EXPECT_EQ(losses(run).size(), 2u);  // steps 6 and 7
}

TEST(Resume, AFinishedRunSaysSoAndHowToTrainFurther) {
  const auto [run, full] = finished_run("resume-finished");
  const auto before = files_under(run);
  CliResult r = run_halo("launch --no-progress --resume " + run);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("run " + run + " has finished: its checkpoint step-000006.pt is at step 6 of schedule.steps 6"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--set schedule.steps=12"), std::string::npos) << r.out;
  EXPECT_EQ(files_under(run), before);
}

}  // namespace
}  // namespace halo::testing
