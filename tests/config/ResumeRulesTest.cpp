// What may change on resume: cadence, schedule and optimizer settings freely; layout and the
// global batch with a note; the model, its input, the seed, precision and optimizer kind never.
#include <gtest/gtest.h>

#include "config/ResumeRules.h"

namespace halo::config {
namespace {

const ResumeChange* find(const std::vector<ResumeChange>& all, const std::string& field) {
  for (const auto& c : all)
    if (c.field == field) return &c;
  return nullptr;
}

TEST(ResumeRules, TheSameExperimentHasNoChange) {
  EXPECT_TRUE(resume_changes(ExperimentConfig{}, ExperimentConfig{}).empty());
}

TEST(ResumeRules, CadenceScheduleAndOptimizerSettingsMayChange) {
  ExperimentConfig a, b;
  b.optim.lr = 0.5;
  b.schedule.steps = 500;
  b.train.log_every = 7;
  b.train.checkpoint_every = 9;
  b.train.nonfinite = NonFinite::Skip;
  b.name = "renamed";
  b.parallel.threads_per_rank = 4;
  b.parallel.pointwise = Pointwise::OneDnn;  // the kernels, not the model: the same values to rounding
  const auto all = resume_changes(a, b);
  ASSERT_EQ(all.size(), 8u);
  for (const auto& c : all) {
    EXPECT_TRUE(c.allowed) << c.field;
    EXPECT_EQ(c.note, "") << c.field;
  }
  ASSERT_NE(find(all, "optim.lr"), nullptr);
  EXPECT_EQ(find(all, "optim.lr")->before, "0.001");
  EXPECT_EQ(find(all, "optim.lr")->after, "0.5");
}

TEST(ResumeRules, LayoutAndGlobalBatchMayChangeWithANote) {
  ExperimentConfig a, b;
  b.parallel.sp = 1;
  b.parallel.strategy = Strategy::None;
  b.parallel.dp = 2;
  const auto all = resume_changes(a, b);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_TRUE(find(all, "parallel.sp")->allowed);
  EXPECT_NE(find(all, "parallel.sp")->note.find("the checkpoint holds full tensors"), std::string::npos);
  EXPECT_TRUE(find(all, "parallel.strategy")->allowed);
  EXPECT_TRUE(find(all, "parallel.dp")->allowed);
  EXPECT_NE(find(all, "parallel.dp")->note.find("the global batch changes from 1 to 2 samples"), std::string::npos)
      << find(all, "parallel.dp")->note;
}

TEST(ResumeRules, TheModelItsInputAndItsStateMayNot) {
  ExperimentConfig a, b;
  b.model.arch = "convnext_tiny";
  b.data.width = 512;
  b.data.views = 3;
  b.task = Task::OpenLaneV2;
  b.train.seed = 9;
  b.train.precision = Precision::Bf16;
  b.optim.name = OptimizerKind::Sgd;
  const auto all = resume_changes(a, b);
  ASSERT_EQ(all.size(), 7u);
  for (const auto& c : all) {
    EXPECT_FALSE(c.allowed) << c.field;
    EXPECT_FALSE(c.note.empty()) << c.field;
  }
  EXPECT_EQ(find(all, "data.width")->before, "256");
  EXPECT_EQ(find(all, "model.arch")->after, "\"convnext_tiny\"");
  EXPECT_NE(resumable_settings().find("optim.*"), std::string::npos);
}

}  // namespace
}  // namespace halo::config
