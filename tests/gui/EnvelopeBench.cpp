// Benchmark (not a test): redraw of 8 ranks x 100 k steps on a 1600x500 QCustomPlot,
// offscreen. Times the envelope path (resample every series + replot) against handing
// QCustomPlot every point with its own sampling off. Prints JSON; target < 50 ms.
#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include <qcustomplot.h>

#include "EnvelopeGraph.h"

namespace {

struct Stats {
  double mean = 0, median = 0, max = 0;
};

template <class F>
Stats time_it(int reps, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    QElapsedTimer t;
    t.start();
    f(i);
    ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
  }
  Stats s;
  for (double v : ms) s.mean += v / reps, s.max = std::max(s.max, v);
  std::sort(ms.begin(), ms.end());
  s.median = ms[ms.size() / 2];
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 100000, ranks = 8, reps = 30;
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> x(static_cast<size_t>(steps));
  for (int i = 0; i < steps; ++i) x[static_cast<size_t>(i)] = i;
  std::vector<std::vector<double>> y(ranks, std::vector<double>(static_cast<size_t>(steps)));
  for (auto& s : y) {
    double v = 100;
    for (auto& p : s) p = v += noise(rng);
  }

  QCustomPlot plot;
  plot.resize(1600, 500);
  plot.setPlottingHint(QCP::phFastPolylines, true);  // as LivePlots sets it
  plot.show();
  std::vector<std::unique_ptr<halo::gui::EnvelopeGraph>> graphs;
  for (int r = 0; r < ranks; ++r) {
    graphs.push_back(std::make_unique<halo::gui::EnvelopeGraph>(&plot, QString("rank %1").arg(r),
                                                                QColor::fromHsv(r * 45, 200, 200)));
    graphs.back()->set_data(x, y[static_cast<size_t>(r)]);
  }
  plot.xAxis->setRange(0, steps);
  plot.yAxis->setRange(-2000, 2000);
  plot.replot(QCustomPlot::rpImmediateRefresh);  // warm-up
  // A redraw as a zoom/pan or a live update does it: new x range, resample all, replot.
  size_t drawn = 0;
  const Stats env = time_it(reps, [&](int i) {
    plot.xAxis->setRange(i % 2, steps - (i % 2));
    for (auto& g : graphs) g->resample();
    plot.replot(QCustomPlot::rpImmediateRefresh);
    drawn = 0;
    for (auto& g : graphs) drawn += g->drawn_points();
  });
  const Stats resample_only = time_it(reps, [&](int i) {
    plot.xAxis->setRange(i % 2, steps - (i % 2));
    for (auto& g : graphs) g->resample();
  });
  // Baseline: every point to QCustomPlot, its adaptive sampling off.
  for (int r = 0; r < ranks; ++r) {
    QVector<double> k(x.begin(), x.end()), v(y[static_cast<size_t>(r)].begin(), y[static_cast<size_t>(r)].end());
    graphs[static_cast<size_t>(r)]->graph()->setData(k, v, true);
  }
  const Stats all = time_it(5, [&](int i) {
    plot.xAxis->setRange(i % 2, steps - (i % 2));
    plot.replot(QCustomPlot::rpImmediateRefresh);
  });
  std::printf(
      "{\"steps\": %d, \"ranks\": %d, \"plot_px\": [1600, 500], \"envelope_points_drawn\": %zu,\n"
      " \"envelope_redraw_ms\": {\"mean\": %.2f, \"median\": %.2f, \"max\": %.2f, \"reps\": %d},\n"
      " \"of_which_resample_ms\": {\"median\": %.2f},\n"
      " \"all_points_redraw_ms\": {\"mean\": %.2f, \"median\": %.2f, \"max\": %.2f, \"reps\": 5},\n"
      " \"target_ms\": 50, \"ok\": %s}\n",
      steps, ranks, drawn, env.mean, env.median, env.max, reps, resample_only.median, all.mean, all.median, all.max,
      env.median < 50 ? "true" : "false");
  return env.median < 50 ? 0 : 1;
}
