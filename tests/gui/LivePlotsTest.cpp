// The live view on runs built from step events: a panel per loss key, x zoom linked across
// panels with a reset, values on hover, log y, run colours and labels by id, overlays on
// every panel, memory on a linear axis with the limit and the prediction, "starting ranks…".
#include <gtest/gtest.h>

#include <QSignalSpy>

#include <cmath>

#include <qcustomplot.h>

#include "EnvelopeGraph.h"
#include "GuiTestSupport.h"
#include "LivePlots.h"
#include "PlotPanel.h"
#include "RunModel.h"
#include "RunProgress.h"
#include "SeriesColor.h"
#include "config/ExperimentConfig.h"

namespace halo::gui {
namespace {

using nlohmann::json;

const std::vector<std::string> kOpenLaneKeys{"loss",    "lc_cls", "lc_bbox", "te_cls",
                                             "te_bbox", "te_iou", "lclc",    "lcte"};

// A run of `steps` steps on `ranks` ranks, 0.5 s apart, every loss key decaying.
std::unique_ptr<RunModel> synthetic_run(const QString& dir, int steps, int ranks,
                                        const std::vector<std::string>& keys = {"loss"}, double peak = 8e6) {
  auto run = std::make_unique<RunModel>();
  run->set_run_dir(dir);
  json cfg = testing::tiny_experiment(60);
  cfg["parallel"]["sp"] = ranks;
  run->set_config(config::to_json(config::parse_experiment(cfg).config));
  for (int r = 0; r < ranks; ++r)
    run->add_line(json{{"event", "hello"}, {"rank", r}, {"device", "cpu"}, {"time", 1000.0}}.dump());
  for (int s = 0; s < steps; ++s)
    for (int r = 0; r < ranks; ++r) {
      json losses = json::object();
      for (size_t k = 0; k < keys.size(); ++k) losses[keys[k]] = (k + 1) * 2.0 / (s + 1);
      run->add_line(json{{"event", "step"},
                         {"rank", r},
                         {"step", s},
                         {"time", 1001.0 + 0.5 * s},
                         {"losses", losses},
                         {"lr", 1e-3},
                         {"samples_per_s", 10.0},
                         {"time_ms", {{"forward", 100}, {"backward", 200}, {"comm", 10}, {"optim", 5}, {"total", 315}}},
                         {"memory", {{"current", 4e6}, {"peak", peak + r * 1e6}, {"reserved", 9e8}, {"rss", 9e8}}}}
                        .dump());
    }
  return run;
}

struct Live {
  LivePlots live;
  Live() {
    live.resize(1400, 800);
    live.show();  // laid out, so panels have their pixel widths
    live.run_id = [](const QString& dir) -> std::optional<int64_t> {
      if (dir.endsWith("run-a")) return 3;
      if (dir.endsWith("run-b")) return 7;
      return std::nullopt;
    };
  }
};

TEST(LivePlots, OnePanelPerLossKeyWithItsOwnAxis) {
  Live t;
  auto run = synthetic_run("/tmp/run-a", 20, 2, kOpenLaneKeys);
  t.live.set_run(run.get());
  t.live.refresh();
  ASSERT_EQ(t.live.loss_keys().size(), kOpenLaneKeys.size());
  EXPECT_EQ(t.live.loss_keys().front(), "loss");  // the total first
  for (const std::string& k : kOpenLaneKeys) {
    PlotPanel* p = t.live.loss_panel(k);
    ASSERT_NE(p, nullptr) << k;
    EXPECT_EQ(p->graphCount(), 2) << k;  // raw + smoothed
    EXPECT_EQ(t.live.loss_points(k), 20u) << k;
  }
  // Each term on its own axis, fitted to it: lc_cls peaks at 4 and lcte at 16 (the total's 2 is
  // below both), so a shared axis would give both panels the same range.
  const QCPRange small = t.live.loss_panel("lc_cls")->yAxis->range();
  const QCPRange big = t.live.loss_panel("lcte")->yAxis->range();
  EXPECT_NEAR(small.upper, 4.0, 0.5);
  EXPECT_NEAR(big.upper, 16.0, 2.0);
  // Legends sit below the data, in their own layout row.
  EXPECT_NE(t.live.loss_panel("loss")->legend->layout(), t.live.loss_panel("loss")->axisRect()->insetLayout());
  // A run with one key has one loss panel.
  auto single = synthetic_run("/tmp/run-b", 5, 1);
  t.live.set_run(single.get());
  t.live.refresh();
  EXPECT_EQ(t.live.loss_keys(), std::vector<std::string>{"loss"});
}

TEST(LivePlots, XZoomIsLinkedAcrossPanelsAndResets) {
  Live t;
  auto run = synthetic_run("/tmp/run-a", 40, 2, {"loss", "aux"});
  t.live.set_run(run.get());
  t.live.refresh();
  PlotPanel* loss = t.live.loss_panel("loss");
  loss->xAxis->setRange(10, 20);  // as a wheel zoom or drag does
  EXPECT_TRUE(t.live.zoomed());
  for (PlotPanel* p : t.live.panels()) {
    EXPECT_DOUBLE_EQ(p->xAxis->range().lower, 10);
    EXPECT_DOUBLE_EQ(p->xAxis->range().upper, 20);
  }
  // The y axis follows what is visible: steps 10..20 of 2/(s+1) are below 0.2.
  EXPECT_LT(loss->yAxis->range().upper, 0.25);
  t.live.refresh();  // a live update keeps the zoom
  EXPECT_DOUBLE_EQ(t.live.memory_panel()->xAxis->range().lower, 10);
  t.live.reset_zoom();
  EXPECT_FALSE(t.live.zoomed());
  for (PlotPanel* p : t.live.panels()) {
    EXPECT_DOUBLE_EQ(p->xAxis->range().lower, 0);
    EXPECT_DOUBLE_EQ(p->xAxis->range().upper, 39);
  }
  EXPECT_EQ(t.live.lr_panel()->xAxis->label(), "step");  // x label in step mode too
}

TEST(LivePlots, HoverShowsTheValuesAtTheCursorOnEveryPanel) {
  Live t;
  auto run = synthetic_run("/tmp/run-a", 10, 1);
  t.live.set_run(run.get());
  t.live.set_smoothing(0);
  t.live.refresh();
  PlotPanel* loss = t.live.loss_panel("loss");
  QCoreApplication::processEvents();
  loss->replot();
  QSignalSpy hovered(loss, &PlotPanel::hovered);
  loss->show_cursor(4.2);  // between steps: the value at step 4
  const QString text = loss->hover_text();
  EXPECT_TRUE(text.contains("step 4")) << text.toStdString();
  EXPECT_TRUE(text.contains(QString("#3 tiny: %1").arg(2.0 / 5, 0, 'g', 5))) << text.toStdString();
  // A mouse move over one panel moves the cursor on all of them.
  const QPoint at(static_cast<int>(loss->xAxis->coordToPixel(4.2)), loss->axisRect()->center().y());
  QMouseEvent move(QEvent::MouseMove, at, loss->mapToGlobal(at), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
  QCoreApplication::sendEvent(loss, &move);
  ASSERT_EQ(hovered.count(), 1);
  EXPECT_TRUE(t.live.time_panel()->hover_text().contains("forward: 100"))
      << t.live.time_panel()->hover_text().toStdString();
}

TEST(LivePlots, LogYOnTheLossPanels) {
  Live t;
  auto run = synthetic_run("/tmp/run-a", 30, 1, {"loss", "aux"});
  t.live.set_run(run.get());
  t.live.refresh();
  t.live.set_log_y(true);
  for (const std::string& k : t.live.loss_keys()) {
    EXPECT_EQ(t.live.loss_panel(k)->yAxis->scaleType(), QCPAxis::stLogarithmic) << k;
    EXPECT_GT(t.live.loss_panel(k)->yAxis->range().lower, 0) << k;
  }
  EXPECT_EQ(t.live.memory_panel()->yAxis->scaleType(), QCPAxis::stLinear);
  t.live.set_log_y(false);
  EXPECT_EQ(t.live.loss_panel("loss")->yAxis->scaleType(), QCPAxis::stLinear);
}

TEST(LivePlots, RunsKeepTheirColourAndIdOnEveryPanel) {
  Live t;
  auto a = synthetic_run("/tmp/run-a", 10, 2), b = synthetic_run("/tmp/run-b", 12, 2);
  t.live.set_run(a.get());
  t.live.set_overlays({b.get()});
  t.live.refresh();
  auto names = [](QCustomPlot* p) {
    QStringList out;
    for (int i = 0; i < p->graphCount(); ++i) out << p->graph(i)->name();
    return out;
  };
  auto pen_of = [](QCustomPlot* p, const QString& name) {
    for (int i = 0; i < p->graphCount(); ++i)
      if (p->graph(i)->name() == name) return p->graph(i)->pen().color();
    return QColor();
  };
  EXPECT_TRUE(names(t.live.loss_plot()).contains("#3 tiny"));
  EXPECT_TRUE(names(t.live.loss_plot()).contains("#7 tiny"));
  EXPECT_EQ(pen_of(t.live.loss_plot(), "#3 tiny"), run_color(3));
  EXPECT_EQ(pen_of(t.live.loss_plot(), "#7 tiny"), run_color(7));
  EXPECT_EQ(pen_of(t.live.lr_panel(), "#7 tiny"), run_color(7));  // same colour on every panel
  EXPECT_TRUE(names(t.live.time_panel()).contains("#7 tiny total"));
  EXPECT_TRUE(names(t.live.memory_panel()).contains("#7 tiny peak"));
  EXPECT_EQ(pen_of(t.live.memory_panel(), "#7 tiny peak"), run_color(7));
  QSignalSpy cleared(&t.live, &LivePlots::overlaysCleared);
  t.live.clear_overlays();
  t.live.refresh();
  EXPECT_EQ(cleared.count(), 1);
  EXPECT_FALSE(names(t.live.memory_panel()).contains("#7 tiny peak"));
}

TEST(LivePlots, MemoryIsLinearFitsTheDataAndMarksLimitAndPrediction) {
  Live t;
  auto run = synthetic_run("/tmp/run-a", 10, 2);
  t.live.set_run(run.get());
  t.live.refresh();
  PlotPanel* m = t.live.memory_panel();
  EXPECT_EQ(m->yAxis->scaleType(), QCPAxis::stLinear);
  const double top_mib = 9e6 / (1024.0 * 1024.0);  // rank 1's peak
  EXPECT_GE(m->yAxis->range().upper, top_mib);
  // The RAM limit is far above: a label at the edge, not a stretched axis.
  EXPECT_LT(m->yAxis->range().upper, top_mib * 3);
  bool limit_label = false;
  for (const QString& l : m->off_scale_labels()) limit_label = limit_label || l.startsWith("device limit");
  EXPECT_TRUE(limit_label);
  // The planner's peak for this config is drawn (as a line or an edge label).
  int items_predicted = 0;
  for (int i = 0; i < m->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(m->item(i)); text && text->text().contains("predicted peak"))
      ++items_predicted;
  EXPECT_GE(items_predicted, 1);
  // CPU: no "reserved" (that would be RSS); RSS is shown as RSS and starts hidden.
  bool reserved = false, rss_hidden = false;
  for (int i = 0; i < m->graphCount(); ++i) {
    reserved = reserved || m->graph(i)->name().contains("reserved");
    if (m->graph(i)->name() == "rank 0 RSS (whole process)") rss_hidden = !m->graph(i)->visible();
  }
  EXPECT_FALSE(reserved);
  EXPECT_TRUE(rss_hidden);
  m->set_curve_hidden("rank 0 RSS (whole process)", false);  // a legend click shows it; the axis follows
  EXPECT_GE(m->yAxis->range().upper, 9e8 / (1024.0 * 1024.0));
  t.live.refresh();
  EXPECT_FALSE(m->curve_hidden("rank 0 RSS (whole process)"));  // kept across refreshes
}

TEST(LivePlots, StartingRanksUntilTheFirstStep) {
  Live t;
  auto run = synthetic_run("/tmp/run-a", 0, 2);
  t.live.set_run(run.get());
  t.live.set_live(true);
  t.live.refresh();
  EXPECT_TRUE(t.live.showing_placeholder());
  EXPECT_TRUE(t.live.placeholder_text().startsWith("Starting ranks… 2 of 2 rank(s) reported"))
      << t.live.placeholder_text().toStdString();
  run->add_line(json{{"event", "step"}, {"rank", 0}, {"step", 0}, {"losses", {{"loss", 1.0}}}}.dump());
  t.live.refresh();
  EXPECT_FALSE(t.live.showing_placeholder());
  t.live.set_run(nullptr);
  t.live.refresh();
  EXPECT_TRUE(t.live.showing_placeholder());
}

TEST(RunProgress, StepOfTotalItsPerSecondAndEta) {
  auto run = synthetic_run("/tmp/run-a", 20, 1);  // 60 steps planned, 0.5 s per step
  const RunProgress p = RunProgress::of(*run);
  EXPECT_EQ(p.reached, 20);
  EXPECT_EQ(p.total, 60);
  EXPECT_NEAR(p.it_per_s, 2.0, 1e-9);
  EXPECT_NEAR(p.eta_s(), 20.0, 1e-9);
  EXPECT_EQ(p.text(true), QString::fromUtf8("step 20 of 60 · 2.00 it/s · ETA 0:20"));
  EXPECT_EQ(p.text(false), "20 of 60 steps");
  EXPECT_EQ(RunProgress::duration_text(3723), "1:02:03");
  EXPECT_EQ(RunProgress::of(45, 60, 500).text(true), QString::fromUtf8("step 45 of 60 · 2.00 it/s · ETA 0:08"));
  Live t;
  t.live.set_run(run.get());
  t.live.set_live(true);
  t.live.refresh();
  EXPECT_TRUE(t.live.summary_text().contains(p.text(true))) << t.live.summary_text().toStdString();
}

TEST(PlotPanel, LevelNearTheDataIsALineFarOneAnEdgeLabel) {
  PlotPanel p("t", "y");
  p.resize(400, 250);
  p.add_curve("c", Qt::black).set_data({0, 1, 2}, {1, 2, 3});
  p.add_level(3.5, "near", Qt::red);
  p.add_level(100, "far", Qt::red);
  p.xAxis->setRange(0, 2);
  p.fit_y();
  EXPECT_GE(p.yAxis->range().upper, 3.5);
  EXPECT_LT(p.yAxis->range().upper, 10);
  EXPECT_EQ(p.off_scale_labels(), QStringList{"far"});
  EXPECT_EQ(p.values_at(1.5), "1\nc: 2");  // the point at or before the cursor
}

}  // namespace
}  // namespace halo::gui
