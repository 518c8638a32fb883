// End to end through the window: a run started from the form reaches FINISHED through the
// real launcher, its plots hold its steps, the layout view matches its layout event, the
// history lists it, it exports; a run stopped from the window ends KILLED without an error
// dialog; a sweep is followed by the live view with Launch off and Stop on.
#include <gtest/gtest.h>

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>

#include <fstream>

#include <qcustomplot.h>

#include "CoreChecks.h"
#include "ExportDialog.h"
#include "GuiTestSupport.h"
#include "HistoryView.h"
#include "LayoutView.h"
#include "LivePlots.h"
#include "MainWindow.h"
#include "MemoryView.h"
#include "RunController.h"
#include "RunModel.h"
#include "SetupForm.h"
#include "StrategyView.h"
#include "config/ExperimentConfig.h"

namespace halo::gui {
namespace {

std::vector<nlohmann::json> events(const QString& run_dir, const std::string& kind, int rank) {
  std::vector<nlohmann::json> out;
  std::ifstream in(QDir(run_dir).filePath("events.jsonl").toStdString());
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("event", "") == kind && (rank < 0 || j.value("rank", -1) == rank))
      out.push_back(j);
  }
  return out;
}

struct Window {
  QString dir = testing::gui_fresh_dir("run");
  MainWindow w;
  Window() {
    w.interactive = false;
    w.runs_root = QDir(dir).filePath("runs");
    w.db_path = QDir(dir).filePath("history.db");
    w.history()->db_path = w.db_path;
  }
};

bool wait_for(QSignalSpy& spy, int ms) { return spy.count() > 0 || spy.wait(ms); }

TEST(RunWindow, RunFromTheWindowFinishesAndEveryViewShowsIt) {
  Window t;
  t.w.setup()->set_experiment(testing::tiny_experiment(5));
  ASSERT_TRUE(t.w.setup()->valid()) << t.w.setup()->problems_text().toStdString();
  RunController* c = t.w.controller();
  QSignalSpy finished(c, &RunController::finished);
  QSignalSpy states(c, &RunController::stateChanged);
  t.w.launch(t.w.setup()->experiment());
  EXPECT_EQ(c->state(), RunController::State::Running);
  EXPECT_FALSE(t.w.launch_action()->isEnabled());
  EXPECT_TRUE(t.w.stop_action()->isEnabled());
  EXPECT_TRUE(t.w.windowTitle().contains("tiny")) << t.w.windowTitle().toStdString();
  ASSERT_TRUE(wait_for(finished, 240000)) << "no finish; run " << c->run_dir().toStdString();
  ASSERT_TRUE(finished.at(0).at(0).toBool()) << finished.at(0).at(1).toString().toStdString();
  EXPECT_EQ(c->state(), RunController::State::Finished);
  ASSERT_GE(states.count(), 2);
  EXPECT_EQ(states.first().at(0).value<RunController::State>(), RunController::State::Running);
  EXPECT_EQ(states.last().at(0).value<RunController::State>(), RunController::State::Finished);

  // The plots hold every step rank 0 logged, and memory for both ranks.
  const QString run_dir = c->run_dir();
  const auto steps = events(run_dir, "step", 0);
  ASSERT_EQ(steps.size(), 5u);
  t.w.live()->refresh();
  EXPECT_EQ(t.w.live()->loss_points("loss"), steps.size());
  EXPECT_EQ(c->model()->steps().size(), steps.size());
  EXPECT_DOUBLE_EQ(c->model()->losses().at("loss").back(), steps.back()["losses"]["loss"].get<double>());
  EXPECT_EQ(c->model()->ranks().size(), 2u);
  EXPECT_GE(t.w.live()->memory_plot()->graphCount(), 4);
  EXPECT_GT(t.w.live()->loss_plot()->graph(0)->dataCount(), 0);
  EXPECT_EQ(t.w.live()->logs()->count(), 2);

  // The layout view is the layout event, layer by layer and rank by rank.
  const auto layout = events(run_dir, "layout", 0);
  ASSERT_EQ(layout.size(), 1u);
  QTableWidget* table = t.w.layout_view()->table();
  const auto& layers = layout[0]["layers"];
  ASSERT_EQ(table->rowCount(), static_cast<int>(layers.size()));
  ASSERT_EQ(table->columnCount(), LayoutView::kFirstRank + 2);
  for (size_t i = 0; i < layers.size(); ++i) {
    EXPECT_EQ(table->item(static_cast<int>(i), 0)->text().toStdString(), layers[i]["name"].get<std::string>());
    for (const auto& r : layers[i]["ranks"]) {
      const auto& s = r["shape"];
      const std::string want = "(" + std::to_string(s[0].get<int64_t>()) + ", " + std::to_string(s[1].get<int64_t>()) +
                               ", " + std::to_string(s[2].get<int64_t>()) + ", " + std::to_string(s[3].get<int64_t>()) +
                               ")  halo " + std::to_string(r["halo_left"].get<int>()) + "|" +
                               std::to_string(r["halo_right"].get<int>()) + "  ";
      const std::string got =
          table->item(static_cast<int>(i), LayoutView::kFirstRank + r["rank"].get<int>())->text().toStdString();
      EXPECT_EQ(got.substr(0, want.size()), want) << "layer " << i;
    }
  }
  // Both ranks wrote their stripe of each view after the first step; the views are drawn from them.
  for (int view = 0; view < 2; ++view)
    EXPECT_FALSE(LayoutView::compose_view(run_dir, view, 2).isNull()) << "view " << view;
  EXPECT_TRUE(t.w.layout_view()->load_previews(run_dir));
  // Both ranks measured their exchange times; a 7x7 block's is shown, the stem's (none) is not.
  ASSERT_EQ(c->model()->exchange_ms().size(), 2u);
  EXPECT_GT(c->model()->exchange_ms().at(1).at("stages.0.blocks.0.conv_dw"), 0.0);
  for (int row = 0; row < table->rowCount(); ++row) {
    const std::string name = table->item(row, LayoutView::kName)->text().toStdString();
    const QString ms = table->item(row, LayoutView::kExchange)->text();
    if (name == "stages.0.blocks.0.conv_dw") {
      EXPECT_NE(ms, "-");
    }
    if (name == "stem.0") {
      EXPECT_EQ(ms, "-");
    }
  }
  // Both ranks measured their second step's live bytes; the memory tab draws them on the planner's walk.
  ASSERT_EQ(c->model()->memory_timelines().size(), 2u);
  const auto& timeline = c->model()->memory_timelines().at(1);
  EXPECT_EQ(timeline.step, 1);
  EXPECT_GT(timeline.start, 0);
  ASSERT_GE(timeline.points.size(), 3u);
  EXPECT_EQ(timeline.points.front().where, "forward of stem");
  EXPECT_EQ(timeline.points.back().where, "optimizer step");
  t.w.memory_view()->refresh();
  EXPECT_EQ(t.w.memory_view()->timeline_curves("measured"), 2);
  EXPECT_TRUE(t.w.memory_view()->measured_peak_text().startsWith("measured peak"))
      << t.w.memory_view()->measured_peak_text().toStdString();

  // History lists it as FINISHED; export writes the file where the dialog says.
  t.w.history()->refresh();
  ASSERT_EQ(t.w.history()->table()->rowCount(), 1);
  EXPECT_EQ(t.w.history()->table()->item(0, 2)->text(), "FINISHED");
  EXPECT_EQ(t.w.history()->table()->item(0, HistoryView::kSteps)->text(), "5 / 5");
  EXPECT_EQ(t.w.history()->table()->item(0, HistoryView::kFinalLoss)->text(),
            QString::number(steps.back()["losses"]["loss"].get<double>(), 'g', 4));
  EXPECT_EQ(t.w.history()->table()->item(0, HistoryView::kPeak)->text(),
            LayoutView::bytes_text(std::max(c->model()->peak_bytes(0), c->model()->peak_bytes(1))));
  // A tag and a note through `halo runs`, then the tag filter finds the run.
  QSignalSpy cli(t.w.history(), &HistoryView::cliFinished);
  const QString id = t.w.history()->table()->item(0, 0)->text();
  t.w.history()->run_cli({"runs", "tag", id, "baseline"});
  ASSERT_TRUE(wait_for(cli, 60000));
  EXPECT_EQ(cli.takeFirst().at(0).toInt(), 0);
  t.w.history()->run_cli({"runs", "note", id, "first tiny run"});
  ASSERT_TRUE(wait_for(cli, 60000));
  EXPECT_EQ(cli.takeFirst().at(0).toInt(), 0);
  ASSERT_EQ(t.w.history()->table()->rowCount(), 1);
  EXPECT_EQ(t.w.history()->table()->item(0, 8)->text(), "baseline");
  // Clone into setup: the form holds the run's config (a new run folder).
  t.w.history()->table()->selectRow(0);
  for (auto* b : t.w.history()->findChildren<QPushButton*>())
    if (b->text() == "Clone into setup") b->click();
  auto cloned = config::parse_experiment(t.w.setup()->experiment()).config;
  auto original = config::parse_experiment(c->model()->config()).config;
  EXPECT_TRUE(cloned.run_dir.empty());
  original.run_dir.clear();
  EXPECT_EQ(cloned, original);
  ExportDialog d(run_dir);
  d.db_path = t.w.db_path;
  ASSERT_GT(d.checkpoints()->count(), 0);
  QSignalSpy exported(&d, &ExportDialog::exported);
  d.start_export();
  ASSERT_TRUE(wait_for(exported, 120000));
  EXPECT_TRUE(exported.at(0).at(0).toBool()) << d.result_text().toStdString();
  EXPECT_TRUE(QFile::exists(exported.at(0).at(1).toString()));
  EXPECT_TRUE(d.result_text().contains(exported.at(0).at(1).toString())) << d.result_text().toStdString();
  // The same file again: refused, with the CLI's words, until "Replace" is ticked.
  auto exports = [&](int n) {
    while (exported.count() < n)
      if (!exported.wait(120000)) return false;
    return true;
  };
  d.start_export();
  ASSERT_TRUE(exports(2));
  EXPECT_FALSE(exported.at(1).at(0).toBool());
  EXPECT_TRUE(d.result_text().contains("already exists")) << d.result_text().toStdString();
  d.replace()->setChecked(true);
  d.start_export();
  ASSERT_TRUE(exports(3));
  EXPECT_TRUE(exported.at(2).at(0).toBool()) << d.result_text().toStdString();

  // Strategies: the run's measured peak next to the planner's prediction for its config.
  t.w.compare_runs({run_dir});
  QTableWidget* bars = t.w.strategies()->table();
  ASSERT_EQ(bars->rowCount(), 1);
  EXPECT_EQ(bars->item(0, 0)->text(), "tp2");
  const auto predicted = CoreChecks::predicted_peak_bytes(config::parse_experiment(c->model()->config()).config);
  ASSERT_TRUE(predicted.has_value());
  EXPECT_EQ(bars->item(0, 3)->text(), LayoutView::bytes_text(*predicted));
  EXPECT_EQ(bars->item(0, 2)->text(),
            LayoutView::bytes_text(std::max(c->model()->peak_bytes(0), c->model()->peak_bytes(1))));

  // Re-opening the finished run from its folder shows the same steps, and the form gets its
  // config (not the defaults).
  t.w.setup()->set_experiment(config::to_json(config::ExperimentConfig{}));
  ASSERT_TRUE(t.w.open_run(run_dir));
  EXPECT_EQ(t.w.shown_run()->steps().size(), steps.size());
  auto reopened = config::parse_experiment(t.w.setup()->experiment()).config;
  EXPECT_EQ(reopened, original);
  EXPECT_TRUE(t.w.windowTitle().contains(QFileInfo(run_dir).fileName())) << t.w.windowTitle().toStdString();
  t.w.live()->refresh();
  const int alone = t.w.live()->loss_plot()->graphCount();  // raw + smoothed per loss key
  EXPECT_EQ(alone, 2 * static_cast<int>(t.w.shown_run()->losses().size()));
  // Overlaying another run adds its total loss (raw + smoothed) to the same plot.
  t.w.overlay_runs({run_dir});
  t.w.live()->refresh();
  EXPECT_EQ(t.w.live()->loss_plot()->graphCount(), alone + 2);
}

TEST(RunWindow, StopFromTheWindowEndsTheRunKilledWithoutADialog) {
  Window t;
  t.w.setup()->set_experiment(testing::tiny_experiment(100000));
  RunController* c = t.w.controller();
  QSignalSpy finished(c, &RunController::finished);
  QSignalSpy events_added(c, &RunController::eventsAdded);
  t.w.launch(t.w.setup()->experiment());
  for (int i = 0; i < 600 && c->model()->step_events() == 0 && finished.count() == 0; ++i) events_added.wait(500);
  ASSERT_GT(c->model()->step_events(), 0) << "no step before stop";
  // A second window's controller re-attaches to the running launcher (as History does for a
  // run left going) and sees it end too.
  RunController again;
  QSignalSpy again_finished(&again, &RunController::finished);
  again.attach(c->run_dir(), c->pid());
  EXPECT_EQ(again.state(), RunController::State::Running);
  t.w.stop();  // the toolbar's Stop
  ASSERT_TRUE(wait_for(finished, 60000));
  EXPECT_FALSE(finished.at(0).at(0).toBool());
  EXPECT_EQ(c->state(), RunController::State::Killed);  // stopped, not failed
  EXPECT_TRUE(c->failure().contains("stopped by the user")) << c->failure().toStdString();
  EXPECT_EQ(t.w.state_text(), "run: killed");
  EXPECT_TRUE(t.w.launch_action()->isEnabled());
  EXPECT_FALSE(t.w.stop_action()->isEnabled());
  t.w.history()->refresh();
  ASSERT_EQ(t.w.history()->table()->rowCount(), 1);
  EXPECT_EQ(t.w.history()->table()->item(0, HistoryView::kStatus)->text(), "KILLED");
  ASSERT_TRUE(wait_for(again_finished, 60000));
  EXPECT_EQ(again.state(), RunController::State::Killed);  // it read the launcher's word
  EXPECT_GT(again.model()->step_events(), 0);
}

TEST(RunWindow, LiveFollowsTheSweepWithLaunchOffAndStopOn) {
  Window t;
  nlohmann::json e = testing::tiny_experiment(8);
  t.w.setup()->set_experiment(e);
  StrategyView* s = t.w.strategies();
  QSignalSpy started(s, &StrategyView::sweepRunStarted);
  QSignalSpy done(s, &StrategyView::sweepFinished);
  s->start_sweep(t.w.setup()->experiment(), t.w.runs_root, t.w.db_path);
  ASSERT_TRUE(wait_for(started, 10000));
  EXPECT_EQ(started.at(0).at(0).toInt(), 0);
  EXPECT_EQ(started.at(0).at(1).toInt(), 6);
  EXPECT_EQ(t.w.shown_run(), s->sweep_controller()->model());  // Live shows the sweep's run
  EXPECT_FALSE(t.w.launch_action()->isEnabled());
  EXPECT_TRUE(t.w.stop_action()->isEnabled());
  EXPECT_TRUE(t.w.live()->sweep_bar()->isVisibleTo(t.w.live()));
  EXPECT_TRUE(t.w.state_text().startsWith("sweep 1 of 6")) << t.w.state_text().toStdString();
  ASSERT_TRUE(started.count() >= 2 || started.wait(240000)) << "the sweep's second run did not start";
  EXPECT_EQ(t.w.shown_run(), s->sweep_controller()->model());
  RunController* c = s->sweep_controller();
  QSignalSpy events_added(c, &RunController::eventsAdded);
  for (int i = 0; i < 600 && c->running() && c->model()->step_events() == 0; ++i) events_added.wait(500);
  ASSERT_TRUE(c->running()) << "the second run ended before it could be stopped";
  t.w.stop();  // stops the run going and the rest of the sweep
  ASSERT_TRUE(wait_for(done, 120000));
  EXPECT_TRUE(t.w.launch_action()->isEnabled());
  EXPECT_FALSE(t.w.stop_action()->isEnabled());
  EXPECT_EQ(s->runs().size(), 2u);  // the finished one and the stopped one
  t.w.history()->refresh();
  ASSERT_EQ(t.w.history()->table()->rowCount(), 2);
  for (int row = 0; row < 2; ++row)
    EXPECT_EQ(t.w.history()->table()->item(row, HistoryView::kSweep)->text(), QFileInfo(s->sweep_dir()).fileName());
}

TEST(RunWindow, BadRunFolderIsAMessageNotACrash) {
  Window t;
  EXPECT_FALSE(t.w.open_run(QDir(t.dir).filePath("no-such-run")));
  EXPECT_EQ(t.w.shown_run(), nullptr);
}

}  // namespace
}  // namespace halo::gui
