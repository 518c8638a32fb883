// The planner tab: its table is memory::plan_setups for the form's experiment, the
// recommendation follows the budget slider, cuda plans without a GPU, a row fills the form.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTableWidget>

#include "PlannerView.h"
#include "config/ExperimentConfig.h"
#include "memory/StepTime.h"

namespace halo::gui {
namespace {

using nlohmann::json;

json quickstart_json() {
  QFile f(QDir(HALO_SOURCE_DIR "/experiments").filePath("quickstart.json"));
  EXPECT_TRUE(f.open(QIODevice::ReadOnly));
  return json::parse(f.readAll().toStdString());
}

TEST(PlannerView, TableIsThePlannersRowsWithTheRecommendationMarked) {
  PlannerView v;
  v.set_experiment(quickstart_json());
  v.set_devices("1,2,4");
  v.set_budget_bytes(int64_t{8} << 30);
  ASSERT_TRUE(v.plan()) << v.problem_text().toStdString();
  const auto cfg = config::parse_experiment(quickstart_json()).config;
  const memory::PlanResult want =
      memory::plan_setups(cfg, {1, 2, 4}, v.budget_bytes(), memory::stored_rates(memory::DeviceKind::Cpu));
  ASSERT_EQ(v.table()->rowCount(), static_cast<int>(want.rows.size()));
  for (size_t i = 0; i < want.rows.size(); ++i)
    EXPECT_EQ(v.table()->item(static_cast<int>(i), 1)->text().toStdString(), want.rows[i].label);
  ASSERT_TRUE(want.recommended);
  const int rec = static_cast<int>(*want.recommended);
  EXPECT_EQ(v.table()->currentRow(), rec);
  EXPECT_TRUE(v.table()->item(rec, 10)->text().contains("recommended"));
  EXPECT_TRUE(v.table()->item(rec, 1)->font().bold());
}

TEST(PlannerView, TheBudgetSliderChangesWhatFits) {
  PlannerView v;
  v.set_experiment(quickstart_json());
  v.set_devices("1,2,4");
  v.set_budget_bytes(int64_t{64} << 30);
  ASSERT_TRUE(v.plan() && v.plan()->recommended);
  const std::string roomy = v.plan()->rows[*v.plan()->recommended].label;
  // Just below the roomy pick: it no longer fits, another setup is recommended.
  v.set_budget_bytes(v.plan()->rows[*v.plan()->recommended].reserved * 9 / 10);
  ASSERT_TRUE(v.plan());
  for (const auto& row : v.plan()->rows)
    if (row.problem.empty()) {
      EXPECT_EQ(row.fits, row.reserved <= v.plan()->budget) << row.label;
    }
  if (v.plan()->recommended) {
    EXPECT_NE(v.plan()->rows[*v.plan()->recommended].label, roomy);
  }
  v.set_devices("1,2");
  v.budget_slider()->setValue(0);  // 64 MiB: nothing of quickstart fits on 1 or 2 (tp4+checkpoint+zero2 does on 4)
  v.replan();
  EXPECT_FALSE(v.plan()->recommended);
}

TEST(PlannerView, PlansCudaOnAMachineWithoutOne) {
  PlannerView v;
  json e = quickstart_json();
  e["parallel"]["device"] = "cuda";
  v.set_experiment(e);
  v.replan();
  ASSERT_TRUE(v.plan()) << v.problem_text().toStdString();
  EXPECT_EQ(v.plan()->budget, int64_t{80} << 30);  // `halo plan`'s default on cuda
  EXPECT_TRUE(v.plan()->recommended);
  EXPECT_FALSE(v.table()->item(0, 5)->text().contains("exact on cpu"));  // reserved shown for cuda
}

TEST(PlannerView, LaunchThisRowGivesThatSetup) {
  PlannerView v;
  v.set_experiment(quickstart_json());
  v.set_devices("4");
  v.replan();
  ASSERT_TRUE(v.plan());
  int row = -1;
  for (int i = 0; i < v.table()->rowCount(); ++i)
    if (v.table()->item(i, 1)->text() == "tp2+checkpoint(stage)") row = i;
  ASSERT_GE(row, 0);
  v.select_row(row);
  QSignalSpy use(&v, &PlannerView::useRow);
  for (auto* b : v.findChildren<QPushButton*>())
    if (b->text() == "Launch this row") b->click();
  ASSERT_EQ(use.count(), 1);
  EXPECT_TRUE(use.at(0).at(1).toBool());
  const auto e = use.at(0).at(0).value<json>();
  const auto parsed = config::parse_experiment(e);
  ASSERT_TRUE(parsed.problems.empty()) << config::describe_problems(parsed.problems);
  EXPECT_EQ(parsed.config.parallel.sp, 2);
  EXPECT_EQ(parsed.config.parallel.dp, 2);
  EXPECT_EQ(parsed.config.parallel.strategy, config::Strategy::TpCheckpoint);
  EXPECT_EQ(parsed.config.parallel.checkpoint_level, config::CheckpointLevel::Stage);
  EXPECT_EQ(parsed.config.name, "quickstart");  // the rest is the form's
}

}  // namespace
}  // namespace halo::gui
