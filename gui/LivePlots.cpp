// Curves are rebuilt from the RunModel on each (throttled) refresh; each plot resamples its
// envelopes when its x range changes, so zoom and pan cost O(visible points) per series.
#include "LivePlots.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSlider>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <iterator>

#include <qcustomplot.h>

#include "EnvelopeGraph.h"
#include "EnvelopeSampler.h"
#include "RunModel.h"
#include "SeriesColor.h"

namespace halo::gui {

struct LivePlots::Curve {
  QCustomPlot* plot;
  std::unique_ptr<EnvelopeGraph> graph;
};

namespace {

std::vector<double> scaled(const std::vector<double>& v, double k) {
  std::vector<double> out(v);
  for (double& x : out) x *= k;
  return out;
}

}  // namespace

LivePlots::LivePlots(QWidget* parent) : QWidget(parent) {
  auto* bar = new QHBoxLayout;
  axis_box_ = new QComboBox(this);
  axis_box_->addItems({tr("Step"), tr("Relative time (s)"), tr("Wall time")});
  smooth_slider_ = new QSlider(Qt::Horizontal, this);
  smooth_slider_->setRange(0, 99);
  smooth_slider_->setValue(static_cast<int>(smoothing_ * 100));
  smooth_label_ = new QLabel(this);
  summary_ = new QLabel(this);
  bar->addWidget(new QLabel(tr("X axis:"), this));
  bar->addWidget(axis_box_);
  bar->addSpacing(16);
  bar->addWidget(new QLabel(tr("Smoothing:"), this));
  bar->addWidget(smooth_slider_, 1);
  bar->addWidget(smooth_label_);
  bar->addSpacing(16);
  bar->addWidget(summary_, 2);

  loss_ = make_plot(tr("Loss"), tr("loss"));
  lr_ = make_plot(tr("Learning rate"), tr("lr"));
  time_ = make_plot(tr("Step time (rank 0)"), tr("ms"));
  throughput_ = make_plot(tr("Throughput (rank 0)"), tr("samples/s"));
  memory_ = make_plot(tr("Memory per rank"), tr("MiB"));
  auto* plots = new QWidget(this);
  auto* grid = new QGridLayout(plots);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->addWidget(loss_, 0, 0);
  grid->addWidget(lr_, 0, 1);
  grid->addWidget(time_, 1, 0);
  grid->addWidget(throughput_, 1, 1);
  grid->addWidget(memory_, 2, 0, 1, 2);
  logs_ = new QTabWidget(this);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plots);
  split->addWidget(logs_);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  auto* v = new QVBoxLayout(this);
  v->addLayout(bar);
  v->addWidget(split, 1);

  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, &LivePlots::refresh);
  connect(axis_box_, &QComboBox::currentIndexChanged, this, [this](int i) { set_axis(static_cast<Axis>(i)); });
  connect(smooth_slider_, &QSlider::valueChanged, this, [this](int v) { set_smoothing(v / 100.0); });
  set_smoothing(smoothing_);
}

LivePlots::~LivePlots() = default;

QCustomPlot* LivePlots::make_plot(const QString& title, const QString& y_label) {
  auto* p = new QCustomPlot(this);
  p->setMinimumSize(300, 160);
  p->plotLayout()->insertRow(0);
  p->plotLayout()->addElement(0, 0, new QCPTextElement(p, title, QFont(font().family(), 10, QFont::Bold)));
  p->yAxis->setLabel(y_label);
  p->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  p->axisRect()->setRangeDrag(Qt::Horizontal);
  p->axisRect()->setRangeZoom(Qt::Horizontal);
  p->legend->setVisible(true);
  QFont lf = font();
  lf.setPointSize(8);
  p->legend->setFont(lf);
  p->legend->setBrush(QColor(255, 255, 255, 200));
  p->setNoAntialiasingOnDrag(true);
  p->setPlottingHint(QCP::phFastPolylines, true);  // 1-px solid lines drawn segment by segment
  connect(p->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this, p](const QCPRange&) {
    for (auto& c : curves_)
      if (c->plot == p) c->graph->resample();
  });
  plots_.push_back(p);
  return p;
}

EnvelopeGraph& LivePlots::curve(QCustomPlot* plot, const QString& name, const QColor& color, Qt::PenStyle style,
                                double width) {
  curves_.push_back(
      std::make_unique<Curve>(Curve{plot, std::make_unique<EnvelopeGraph>(plot, name, color, style, width)}));
  return *curves_.back()->graph;
}

void LivePlots::set_run(const RunModel* run) {
  run_ = run;
  schedule_refresh();
}

void LivePlots::set_overlays(std::vector<const RunModel*> runs) {
  overlays_ = std::move(runs);
  schedule_refresh();
}

void LivePlots::set_axis(Axis a) {
  axis_ = a;
  if (axis_box_->currentIndex() != static_cast<int>(a)) axis_box_->setCurrentIndex(static_cast<int>(a));
  for (auto* p : plots_) {
    if (a == Axis::WallTime) {
      auto t = QSharedPointer<QCPAxisTickerDateTime>::create();
      t->setDateTimeFormat("HH:mm:ss");
      p->xAxis->setTicker(t);
    } else {
      p->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    p->xAxis->setLabel(a == Axis::Step ? tr("step") : a == Axis::RelativeTime ? tr("seconds since start") : tr("time"));
  }
  refresh();
}

void LivePlots::set_smoothing(double weight) {
  smoothing_ = std::clamp(weight, 0.0, 0.99);
  smooth_label_->setText(QString::number(smoothing_, 'f', 2));
  if (smooth_slider_->value() != static_cast<int>(std::lround(smoothing_ * 100)))
    smooth_slider_->setValue(static_cast<int>(std::lround(smoothing_ * 100)));
  schedule_refresh();
}

void LivePlots::schedule_refresh() {
  if (!timer_->isActive()) timer_->start();
}

std::vector<double> LivePlots::x_of(const RunModel& run, int rank) const {
  if (rank < 0 || static_cast<size_t>(rank) >= run.ranks().size()) return {};
  const RankSeries& s = run.ranks()[static_cast<size_t>(rank)];
  if (axis_ == Axis::Step) return s.step;
  if (axis_ == Axis::RelativeTime) return s.time_s;
  std::vector<double> out(s.time_s);
  for (double& t : out) t += std::max(0.0, run.start_wall_s());
  return out;
}

void LivePlots::finish_plot(QCustomPlot* plot, bool keep_x) {
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  bool any_x = false, any_y = false;
  for (auto& c : curves_) {
    if (c->plot != plot || c->graph->empty()) continue;
    x0 = any_x ? std::min(x0, c->graph->x_min()) : c->graph->x_min();
    x1 = any_x ? std::max(x1, c->graph->x_max()) : c->graph->x_max();
    any_x = true;
    double lo, hi;
    if (c->graph->y_range(lo, hi)) {
      y0 = any_y ? std::min(y0, lo) : lo;
      y1 = any_y ? std::max(y1, hi) : hi;
      any_y = true;
    }
  }
  if (!keep_x || !any_x) plot->xAxis->setRange(x0, x1 > x0 ? x1 : x0 + 1);
  if (any_y) {
    const double pad = (y1 - y0) * 0.05 + (y1 == y0 ? std::max(1e-9, std::fabs(y1) * 0.05) : 0);
    plot->yAxis->setRange(y0 - pad, y1 + pad);
  }
  for (auto& c : curves_)
    if (c->plot == plot) c->graph->resample();
  plot->legend->setVisible(plot->graphCount() > 0 && plot->graphCount() <= 12);
  plot->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::refresh() {
  // A user zoom (x range narrower than the data) is kept across live updates.
  std::map<QCustomPlot*, bool> zoomed;
  for (auto* p : plots_) {
    double x1 = 0;
    bool any = false;
    for (auto& c : curves_)
      if (c->plot == p && !c->graph->empty())
        x1 = any ? std::max(x1, c->graph->x_max()) : c->graph->x_max(), any = true;
    zoomed[p] = any && p->xAxis->range().upper < x1 - 1e-9 && axis_ == Axis::Step;
  }
  curves_.clear();
  for (auto* p : plots_) p->clearGraphs();
  memory_->yAxis->setScaleType(QCPAxis::stLinear);
  memory_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
  for (auto* p : plots_) p->clearItems();
  loss_points_.clear();
  std::vector<const RunModel*> runs;
  if (run_) runs.push_back(run_);
  for (auto* o : overlays_)
    if (o && o != run_) runs.push_back(o);
  int color = 0;
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    const RunModel& run = *runs[ri];
    const bool main = ri == 0 && run_;
    const std::vector<double> x = x_of(run, 0);
    const QString prefix = runs.size() > 1 ? run.name() + QString(" #%1 ").arg(ri + 1) : QString();
    for (const auto& [key, values] : run.losses()) {
      if (!main && key != "loss") continue;
      const QColor c = series_color(color++);
      QColor faint = c;
      faint.setAlpha(70);
      auto& raw = curve(loss_, prefix + QString::fromStdString(key) + " (raw)", faint, Qt::SolidLine, 1);
      raw.set_data(x, values);
      raw.graph()->removeFromLegend();
      curve(loss_, prefix + QString::fromStdString(key), c).set_data(x, EnvelopeSampler::smooth(values, smoothing_));
      if (main) loss_points_[key] = raw.size();
    }
    curve(lr_, prefix + "lr", series_color(static_cast<int>(ri))).set_data(x, run.lr());
    if (!main) continue;
    if (!run.ranks().empty()) {
      const RankSeries& r0 = run.ranks()[0];
      const std::pair<const char*, const std::vector<double>*> parts[] = {{"forward", &r0.forward_ms},
                                                                          {"backward", &r0.backward_ms},
                                                                          {"communication", &r0.comm_ms},
                                                                          {"optimizer", &r0.optim_ms},
                                                                          {"total", &r0.total_ms}};
      for (int i = 0; i < 5; ++i)
        curve(time_, parts[i].first, series_color(i), i == 4 ? Qt::DashLine : Qt::SolidLine)
            .set_data(x, *parts[i].second);
      curve(throughput_, tr("samples/s"), series_color(2)).set_data(x, r0.samples_per_s);
    }
    const double MiB = 1.0 / (1024.0 * 1024.0);
    for (size_t r = 0; r < run.ranks().size(); ++r) {
      const RankSeries& s = run.ranks()[r];
      const std::vector<double> xr = x_of(run, static_cast<int>(r));
      const QColor c = series_color(static_cast<int>(r));
      curve(memory_, QString("rank %1 current").arg(r), c).set_data(xr, scaled(s.mem_current, MiB));
      curve(memory_, QString("rank %1 peak").arg(r), c, Qt::DashLine).set_data(xr, scaled(s.mem_peak, MiB));
      if (std::any_of(s.mem_reserved.begin(), s.mem_reserved.end(), [](double v) { return v > 0; }))
        curve(memory_, QString("rank %1 reserved").arg(r), c, Qt::DotLine).set_data(xr, scaled(s.mem_reserved, MiB));
    }
  }
  for (auto* p : plots_) finish_plot(p, zoomed[p]);
  if (run_ && run_->device_limit_bytes() > 0) {  // the device limit, with the y range stretched to show it
    const double limit = run_->device_limit_bytes() / (1024.0 * 1024.0);
    auto* line = new QCPItemStraightLine(memory_);
    line->setPen(QPen(QColor(200, 30, 30), 1.5, Qt::DashDotLine));
    line->point1->setCoords(0, limit);
    line->point2->setCoords(1, limit);
    auto* label = new QCPItemText(memory_);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    label->position->setTypeY(QCPItemPosition::ptPlotCoords);
    label->position->setCoords(0.01, limit);
    label->setText(tr("limit per rank %1 MiB (log scale)").arg(limit, 0, 'f', 0));
    label->setColor(QColor(200, 30, 30));
    memory_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    memory_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    memory_->yAxis->setRange(std::max(1.0, memory_->yAxis->range().lower / 2), limit * 1.5);
    memory_->replot(QCustomPlot::rpQueuedReplot);
  }
  if (run_) {
    const auto& st = run_->steps();
    const double total = st.empty() ? 0 : run_->mean_step_ms(0);
    summary_->setText(tr("%1 — %2 step(s) logged, mean step %3 ms, %4 rank(s)")
                          .arg(run_->name())
                          .arg(st.size())
                          .arg(total, 0, 'f', 1)
                          .arg(run_->ranks().size()));
  } else {
    summary_->setText(tr("no run loaded"));
  }
  update_logs();
}

void LivePlots::update_logs() {
  const size_t n = run_ ? run_->ranks().size() : 0;
  while (static_cast<size_t>(logs_->count()) > n) delete logs_->widget(logs_->count() - 1);
  for (size_t r = 0; r < n; ++r) {
    if (static_cast<size_t>(logs_->count()) <= r) {
      auto* t = new QPlainTextEdit(logs_);
      t->setReadOnly(true);
      t->setMaximumBlockCount(5000);
      t->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
      t->setPlaceholderText(tr("rank %1 wrote nothing to its log (rank%1.log) or the event stream").arg(r));
      logs_->addTab(t, QString("rank %1").arg(r));
    }
    auto* t = static_cast<QPlainTextEdit*>(logs_->widget(static_cast<int>(r)));
    const QString text = QString::fromStdString(run_->ranks()[r].log);
    if (t->toPlainText() != text) t->setPlainText(text);
  }
}

size_t LivePlots::loss_points(const std::string& key) const {
  auto it = loss_points_.find(key);
  return it == loss_points_.end() ? 0 : it->second;
}

}  // namespace halo::gui
