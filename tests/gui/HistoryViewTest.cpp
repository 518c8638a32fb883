// The runs table over a history written here: the figures beside each run (final loss, best
// score, peak, step time, duration, steps of total), sweep runs grouped, newest first with an
// arrow that says so, and the progress of a running run.
#include <gtest/gtest.h>

#include <QDir>
#include <QHeaderView>
#include <QTableWidget>

#include "GuiTestSupport.h"
#include "HistoryView.h"
#include "LayoutView.h"
#include "SortArrowStyle.h"
#include "store/HistoryDb.h"

namespace halo::gui {
namespace {

using nlohmann::json;

json step(int64_t s, int rank, double loss) {
  return {{"event", "step"},
          {"rank", rank},
          {"step", s},
          {"losses", {{"loss", loss}}},
          {"time_ms", {{"total", 250.0}}},
          {"memory", {{"current", 100}, {"peak", 3 << 20}, {"reserved", 0}, {"rss", 0}}}};
}

struct History {
  QString dir = testing::gui_fresh_dir("history");
  QString db = QDir(dir).filePath("history.db");
  int64_t plain = 0, sweep_a = 0, sweep_b = 0, running = 0;
  History() {
    store::HistoryDb h(db.toStdString(), store::HistoryDb::Mode::Write);
    const json cfg = testing::tiny_experiment(10);
    plain = h.begin_run(cfg, QDir(dir).filePath("runs/tiny-1").toStdString());
    for (int s = 0; s < 10; ++s) h.record_event(plain, 0, step(s, 0, 1.0 / (s + 1)));
    h.record_event(plain, 0, {{"event", "eval"}, {"step", 9}, {"OLS", 0.42}});
    h.finish_run(plain, store::RunStatus::Finished, "");
    int n = 2;
    for (int64_t* id : {&sweep_a, &sweep_b}) {
      const QString run_dir = QDir(dir).filePath(QString("runs/sweep-tiny-20250101-120000/tiny-%1").arg(n++));
      *id = h.begin_run(cfg, run_dir.toStdString());
      h.record_event(*id, 0, step(0, 0, 2.0));
      h.finish_run(*id, store::RunStatus::Killed, "stopped by the user (Ctrl-C)");
    }
    running = h.begin_run(cfg, QDir(dir).filePath("runs/tiny-4").toStdString());
    for (int s = 0; s < 4; ++s) h.record_event(running, 0, step(s, 0, 1.0));
    h.flush();
  }
};

TEST(HistoryView, ShowsTheFiguresOfEachRun) {
  History t;
  HistoryView v;
  v.db_path = t.db;
  v.refresh();
  ASSERT_EQ(v.table()->rowCount(), 4);
  const int row = v.row_of(t.plain);
  ASSERT_GE(row, 0);
  auto cell = [&](int r, int c) { return v.table()->item(r, c)->text(); };
  EXPECT_EQ(cell(row, HistoryView::kSteps), "10 / 10");
  EXPECT_EQ(cell(row, HistoryView::kFinalLoss), QString::number(0.1, 'g', 4));
  EXPECT_EQ(cell(row, HistoryView::kBestScore), "0.42");
  EXPECT_EQ(cell(row, HistoryView::kPeak), LayoutView::bytes_text(3 << 20));
  EXPECT_EQ(cell(row, HistoryView::kStepMs), "250.0");
  EXPECT_FALSE(cell(row, HistoryView::kDuration).isEmpty());
  // A running run: steps of total and its rate and time left (250 ms a step).
  const int live = v.row_of(t.running);
  EXPECT_EQ(cell(live, HistoryView::kStatus), "RUNNING");
  EXPECT_EQ(cell(live, HistoryView::kSteps), "4 / 10");
  EXPECT_EQ(cell(live, HistoryView::kProgress), QString::fromUtf8("4.00 it/s · ETA 0:02"));
}

TEST(HistoryView, FiguresFollowTheHistoryFileShown) {
  History a;  // its first run, id 1, finished with loss 0.1
  const QString dir = testing::gui_fresh_dir("history");
  const QString other = QDir(dir).filePath("history.db");
  int64_t id = 0;
  {
    store::HistoryDb h(other.toStdString(), store::HistoryDb::Mode::Write);
    id = h.begin_run(testing::tiny_experiment(1), QDir(dir).filePath("runs/tiny-1").toStdString());
    h.record_event(id, 0, step(0, 0, 7.0));
    h.finish_run(id, store::RunStatus::Finished, "");
  }
  ASSERT_EQ(id, a.plain);  // the same id in both files
  HistoryView v;
  v.db_path = a.db;
  v.refresh();
  EXPECT_EQ(v.table()->item(v.row_of(a.plain), HistoryView::kFinalLoss)->text(), QString::number(0.1, 'g', 4));
  v.db_path = other;
  v.refresh();
  ASSERT_EQ(v.table()->rowCount(), 1);
  EXPECT_EQ(v.table()->item(0, HistoryView::kFinalLoss)->text(), QString::number(7.0, 'g', 4));
}

TEST(HistoryView, GroupsSweepRunsAndSortsNewestFirst) {
  History t;
  HistoryView v;
  v.db_path = t.db;
  v.refresh();
  const int a = v.row_of(t.sweep_a), b = v.row_of(t.sweep_b), plain = v.row_of(t.plain);
  EXPECT_EQ(v.table()->item(a, HistoryView::kSweep)->text(), "sweep-tiny-20250101-120000");
  EXPECT_EQ(v.table()->item(b, HistoryView::kSweep)->text(), "sweep-tiny-20250101-120000");
  EXPECT_TRUE(v.table()->item(plain, HistoryView::kSweep)->text().isEmpty());
  EXPECT_EQ(std::abs(a - b), 1);  // together
  EXPECT_EQ(v.table()->item(a, HistoryView::kId)->background(), v.table()->item(b, HistoryView::kName)->background());
  EXPECT_NE(v.table()->item(a, HistoryView::kId)->background(), v.table()->item(plain, HistoryView::kId)->background());
  EXPECT_EQ(v.table()->item(a, HistoryView::kStatus)->text(), "KILLED");
  // Newest first, and the header's arrow says descending: pointing down.
  EXPECT_EQ(v.table()->item(0, HistoryView::kId)->text().toLongLong(), t.running);
  EXPECT_EQ(v.table()->horizontalHeader()->sortIndicatorOrder(), Qt::DescendingOrder);
  EXPECT_EQ(SortArrowStyle::arrow_for(Qt::DescendingOrder), QStyleOptionHeader::SortDown);
  EXPECT_EQ(SortArrowStyle::arrow_for(Qt::AscendingOrder), QStyleOptionHeader::SortUp);
  // Sorting by loss sorts numbers, not text.
  v.table()->sortItems(HistoryView::kFinalLoss, Qt::AscendingOrder);
  EXPECT_EQ(v.table()->item(v.table()->rowCount() - 1, HistoryView::kFinalLoss)->text(), "2");
  EXPECT_EQ(HistoryView::sweep_of("/x/runs/sweep-q-1/q-none"), "sweep-q-1");
  EXPECT_EQ(HistoryView::sweep_of("/x/runs/q-none"), "");
}

TEST(HistoryView, KeepsTheSelectedRunAcrossRefreshes) {
  History t;
  HistoryView v;
  v.db_path = t.db;
  v.refresh();
  v.table()->selectRow(v.row_of(t.sweep_a));
  v.refresh();
  EXPECT_EQ(v.table()->currentRow(), v.row_of(t.sweep_a));
}

}  // namespace
}  // namespace halo::gui
