// Bars at x = 3·rank (predicted) and 3·rank + 1 (measured), one stacked QCPBars per part; the
// timeline's x is the planner's operation index (TimelineAxis), absolute bytes = fixed state + live.
#include "MemoryView.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>

#include <qcustomplot.h>

#include "CoreChecks.h"
#include "LayoutView.h"
#include "RunModel.h"
#include "SeriesColor.h"
#include "TimelineAxis.h"
#include "config/ExperimentConfig.h"
#include "memory/StepSimulator.h"

namespace halo::gui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

QColor part_color(int part) {
  static const QColor c[] = {QColor(70, 110, 170), QColor(110, 160, 210), QColor(160, 200, 235), QColor(235, 150, 70),
                             QColor(240, 200, 90)};
  return c[part];
}

QCustomPlot* titled_plot(QWidget* parent, const QString& title, const QString& y) {
  auto* p = new QCustomPlot(parent);
  p->setMinimumHeight(230);
  p->plotLayout()->insertRow(0);
  p->plotLayout()->addElement(0, 0, new QCPTextElement(p, title, QFont(parent->font().family(), 9, QFont::Bold)));
  p->yAxis->setLabel(y);
  auto* below = new QCPLayoutGrid;  // the legend below the data
  p->plotLayout()->addElement(2, 0, below);
  below->addElement(0, 0, p->legend);
  p->plotLayout()->setRowStretchFactor(2, 0.001);
  p->legend->setFillOrder(QCPLegend::foColumnsFirst);
  p->legend->setWrap(4);
  p->legend->setBorderPen(Qt::NoPen);
  p->legend->setBrush(Qt::NoBrush);
  QFont small = parent->font();
  small.setPointSize(8);
  p->legend->setFont(small);
  p->legend->setVisible(true);
  return p;
}

std::optional<memory::Prediction> prediction_of(const RunModel& run) {
  if (!run.config().is_object()) return std::nullopt;
  const auto parsed = config::parse_experiment(run.config());
  if (!parsed.problems.empty()) return std::nullopt;
  return CoreChecks::predict(parsed.config);
}

}  // namespace

MemoryView::MemoryView(QWidget* parent) : QWidget(parent) {
  info_ = new QLabel(this);
  info_->setWordWrap(true);
  bars_ = titled_plot(this, tr("Memory per rank: predicted beside measured"), tr("MiB"));
  timeline_ =
      titled_plot(this, tr("Live bytes through one step: predicted and measured (forward, then backward)"), tr("MiB"));
  timeline_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  timeline_->axisRect()->setRangeDrag(Qt::Horizontal);
  timeline_->axisRect()->setRangeZoom(Qt::Horizontal);
  table_ = new QTableWidget(0, 5, this);
  table_->setHorizontalHeaderLabels({tr("rank"), tr("part"), tr("predicted"), tr("measured"), tr("error")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* top = new QHBoxLayout;
  top->addWidget(bars_, 3);
  top->addWidget(table_, 2);
  auto* host = new QWidget(this);
  host->setLayout(top);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(host);
  split->addWidget(timeline_);
  auto* v = new QVBoxLayout(this);
  v->addWidget(info_);
  v->addWidget(split, 1);
  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  timer_->setInterval(500);
  connect(timer_, &QTimer::timeout, this, &MemoryView::refresh);
  refresh();
}

void MemoryView::set_run(const RunModel* run) {
  run_ = run;
  refresh();
}

void MemoryView::schedule_refresh() {
  if (!timer_->isActive()) timer_->start();
}

void MemoryView::refresh() {
  predicted_.clear();
  measured_.clear();
  const auto p = run_ ? prediction_of(*run_) : std::nullopt;
  if (run_) {
    const size_t ranks = std::max(run_->ranks().size(), p ? p->ranks.size() : size_t{0});
    for (size_t r = 0; r < ranks; ++r) {
      // dp replicas are predicted as their sp index
      predicted_.push_back(p ? MemoryBreakdown::predicted(p->ranks[r % p->ranks.size()]) : MemoryBreakdown{});
      measured_.push_back(MemoryBreakdown::measured(*run_, static_cast<int>(r)));
    }
  }
  info_->setText(!run_ ? tr("No run: launch one, or open one from History.")
                 : !p  ? tr("%1: the planner cannot predict this run's config.").arg(run_->name())
                       : tr("%1 — predicted by core's planner (memory::predict) for the run's own config; measured "
                             "from its step events after the first: the peak, and where they carry memory.step_start "
                             "the state (weights + optimizer state) and what the step adds above it (activations and the "
                             "gradients backward makes, let go after the update). The timeline: "
                             "the planner's walk of one step (dashed) and each rank's measured second step (solid).")
                            .arg(run_->name()));
  draw_bars();
  fill_table();
  draw_timeline();
}

void MemoryView::draw_bars() {
  bars_->clearPlottables();
  bars_->clearItems();
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  std::vector<QCPBars*> stack;
  auto layer = [&](const QString& name, const QBrush& brush) {
    auto* b = new QCPBars(bars_->xAxis, bars_->yAxis);
    b->setName(name);
    b->setBrush(brush);
    b->setPen(QPen(QColor(60, 60, 60), 0.5));
    b->setWidth(0.8);
    if (!stack.empty()) b->moveAbove(stack.back());
    stack.push_back(b);
    return b;
  };
  QCPBars* part_bars[MemoryBreakdown::kParts];
  for (int i = 0; i < MemoryBreakdown::kParts; ++i) part_bars[i] = layer(MemoryBreakdown::part_name(i), part_color(i));
  QCPBars* fixed = layer(tr("weights + grads + optimizer (measured together)"),
                         QBrush(part_color(MemoryBreakdown::Gradients), Qt::Dense4Pattern));
  QCPBars* acts =
      layer(tr("activations (measured together)"), QBrush(part_color(MemoryBreakdown::Saved), Qt::Dense4Pattern));
  QCPBars* peak_only = layer(tr("measured peak (not split)"), QBrush(QColor(150, 150, 150), Qt::Dense5Pattern));
  double top = 1;
  for (size_t r = 0; r < predicted_.size(); ++r) {
    const double xp = 3.0 * static_cast<double>(r), xm = xp + 1;
    ticker->addTick(xp, tr("rank %1\npredicted").arg(r));
    ticker->addTick(xm, tr("rank %1\nmeasured").arg(r));
    const MemoryBreakdown& p = predicted_[r];
    const MemoryBreakdown& m = measured_[r];
    for (int i = 0; i < MemoryBreakdown::kParts; ++i) {
      if (p.parts[static_cast<size_t>(i)]) part_bars[i]->addData(xp, *p.parts[static_cast<size_t>(i)] / kMiB);
      if (m.parts[static_cast<size_t>(i)]) part_bars[i]->addData(xm, *m.parts[static_cast<size_t>(i)] / kMiB);
    }
    const bool split = m.fixed_sum() || m.activations_sum();
    if (!m.parts[MemoryBreakdown::Weights] && m.fixed) fixed->addData(xm, *m.fixed / kMiB);
    if (!m.parts[MemoryBreakdown::Saved] && m.activations) acts->addData(xm, *m.activations / kMiB);
    if (!split && m.peak > 0) peak_only->addData(xm, m.peak / kMiB);
    top = std::max({top, p.peak / kMiB, m.peak / kMiB});
    for (const auto& e : MemoryBreakdown::errors(p, m)) {  // the peak's error above the measured bar
      if (e.what != tr("peak")) continue;
      auto* t = new QCPItemText(bars_);
      t->position->setCoords(xm, m.peak / kMiB);
      t->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
      t->setText(QString("%1%2 %").arg(e.relative >= 0 ? "+" : "").arg(e.relative * 100, 0, 'f', 1));
      t->setColor(e.flagged ? QColor(200, 30, 30) : QColor(40, 120, 60));
      QFont f = font();
      f.setBold(e.flagged);
      t->setFont(f);
    }
  }
  for (QCPBars* b : stack)
    if (b->data()->isEmpty()) bars_->removePlottable(b);
  bars_->xAxis->setTicker(ticker);
  bars_->xAxis->setRange(-0.8, std::max(1.8, 3.0 * static_cast<double>(predicted_.size()) - 1.2));
  bars_->yAxis->setRange(0, top * 1.18);
  bars_->replot();
}

void MemoryView::fill_table() {
  table_->setRowCount(0);
  for (size_t r = 0; r < predicted_.size(); ++r)
    for (const auto& e : MemoryBreakdown::errors(predicted_[r], measured_[r])) {
      const int row = table_->rowCount();
      table_->insertRow(row);
      table_->setItem(row, 0, new QTableWidgetItem(QString::number(r)));
      table_->setItem(row, 1, new QTableWidgetItem(e.what));
      table_->setItem(row, 2, new QTableWidgetItem(LayoutView::bytes_text(e.predicted)));
      table_->setItem(row, 3, new QTableWidgetItem(LayoutView::bytes_text(e.measured)));
      auto* err = new QTableWidgetItem(QString("%1%2 %%3")
                                           .arg(e.relative >= 0 ? "+" : "")
                                           .arg(e.relative * 100, 0, 'f', 1)
                                           .arg(e.flagged ? tr("  (over 10 %)") : QString()));
      err->setForeground(e.flagged ? QColor(200, 30, 30) : QColor(40, 120, 60));
      table_->setItem(row, 4, err);
    }
  table_->resizeColumnsToContents();
}

QStringList MemoryView::flagged() const {
  QStringList out;
  for (size_t r = 0; r < predicted_.size(); ++r)
    for (const auto& e : MemoryBreakdown::errors(predicted_[r], measured_[r]))
      if (e.flagged) out << tr("rank %1 %2: %3 %").arg(r).arg(e.what).arg(e.relative * 100, 0, 'f', 1);
  return out;
}

// The planner's walk of one step per sp rank (dashed) and, once the ranks sent it, the measured
// live bytes at every layer boundary (solid, dotted markers) on the same operations.
void MemoryView::draw_timeline() {
  timeline_->clearGraphs();
  timeline_->clearItems();
  peak_text_.clear();
  measured_peak_text_.clear();
  const auto p = run_ ? prediction_of(*run_) : std::nullopt;
  std::vector<std::vector<memory::TracePoint>> traces;
  std::vector<std::string> names;
  if (p)
    for (const auto& r : p->ranks) {
      memory::simulate_step(r.layers, memory::checkpoint_segments(r.layers, p->checkpoint), r.inputs,
                            &traces.emplace_back(), r.bucket_sync ? &*r.bucket_sync : nullptr, r.prefetch_weights);
      if (names.empty())
        for (const auto& t : traces.back()) names.push_back(t.where);
    }
  TimelineAxis axis(names);
  Peak predicted, measured;
  for (size_t k = 0; p && k < p->ranks.size(); ++k) {
    const auto& r = p->ranks[k];
    const double base = static_cast<double>(r.weights + r.gradients + r.optimizer_state + r.scaler_and_buffers);
    QVector<double> x, y;
    for (size_t i = 0; i < traces[k].size(); ++i) {
      x << static_cast<double>(i);
      y << (base + static_cast<double>(traces[k][i].high)) / kMiB;
      predicted.offer(x.back(), y.back(), traces[k][i].where, r.rank);
    }
    QCPGraph* g = timeline_->addGraph();
    g->setName(tr("rank %1 predicted").arg(r.rank));
    g->setPen(QPen(series_color(r.rank), 1.5, Qt::DashLine));
    g->setData(x, y, true);
  }
  if (run_)
    for (const auto& [rank, t] : run_->memory_timelines()) {
      QVector<double> x, y;
      for (const auto& point : t.points) {
        x << axis.x_of(point.where);
        y << static_cast<double>(point.high) / kMiB;
        measured.offer(x.back(), y.back(), point.where, rank);
      }
      QCPGraph* g = timeline_->addGraph();
      g->setName(tr("rank %1 measured (step %2)").arg(rank).arg(t.step + 1));
      g->setPen(QPen(series_color(rank), 2));
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, series_color(rank), 4));
      g->setData(x, y);  // sorted by x: a name the planner does not walk goes after its operations
    }
  if (predicted.y >= 0) peak_text_ = mark_peak(predicted, tr("peak"), QColor(200, 30, 30), false);
  if (measured.y >= 0)  // its text below the point, clear of the predicted peak's
    measured_peak_text_ = mark_peak(measured, tr("measured peak"), QColor(120, 20, 140), predicted.y >= 0);
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (const auto& [x, label] : axis.ticks()) ticker->addTick(x, label);
  QFont small = font();
  small.setPointSize(7);
  timeline_->xAxis->setTickLabelFont(small);
  timeline_->xAxis->setTickLabelRotation(40);
  timeline_->xAxis->setTicker(ticker);
  timeline_->rescaleAxes();
  timeline_->yAxis->setRange(0, std::max({predicted.y, measured.y, 1.0}) * 1.3);
  timeline_->replot();
}

void MemoryView::Peak::offer(double at_x, double at_y, const std::string& at_where, int at_rank) {
  if (at_y <= y) return;
  x = at_x, y = at_y, rank = at_rank;
  where = QString::fromStdString(at_where);
}

// A disc at the peak and its text above (or below) it: "peak 3.2 MiB at backward of stages.0.blocks.1 (rank 0)".
QString MemoryView::mark_peak(const Peak& peak, const QString& what, const QColor& color, bool below) {
  const QString text =
      tr("%1 %2 at %3 (rank %4)").arg(what, LayoutView::bytes_text(peak.y * kMiB), peak.where).arg(peak.rank);
  auto* dot = timeline_->addGraph();
  dot->setName(what);
  dot->setLineStyle(QCPGraph::lsNone);
  dot->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, 8));
  dot->setData(QVector<double>{peak.x}, QVector<double>{peak.y});
  auto* t = new QCPItemText(timeline_);
  t->position->setCoords(peak.x, peak.y);
  t->setPositionAlignment(Qt::AlignHCenter | (below ? Qt::AlignTop : Qt::AlignBottom));
  t->setText(QString::fromUtf8(below ? "▼ " : "▲ ") + text);
  t->setColor(color);
  return text;
}

QString MemoryView::peak_text() const { return peak_text_; }

QString MemoryView::measured_peak_text() const { return measured_peak_text_; }

int MemoryView::timeline_curves(const QString& containing) const {
  int n = 0;
  for (int i = 0; i < timeline_->graphCount(); ++i) {
    const QString name = timeline_->graph(i)->name();
    n += !name.endsWith(tr("peak")) && name.contains(containing) ? 1 : 0;
  }
  return n;
}

}  // namespace halo::gui
