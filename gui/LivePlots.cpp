// Curves are rebuilt from the RunModels on each (throttled) refresh; each panel resamples
// its envelopes when the shared x range changes, so zoom and pan cost O(pixels) per series.
#include "LivePlots.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHash>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>

#include "CoreChecks.h"
#include "EnvelopeGraph.h"
#include "EnvelopeSampler.h"
#include "LayoutView.h"
#include "PlotPanel.h"
#include "RunModel.h"
#include "RunProgress.h"
#include "SeriesColor.h"
#include "config/ExperimentConfig.h"

namespace halo::gui {

namespace {

constexpr double kPerMiB = 1.0 / (1024.0 * 1024.0);

std::vector<double> scaled(const std::vector<double>& v, double k) {
  std::vector<double> out(v);
  for (double& x : out) x *= k;
  return out;
}

// Per step, the largest value over the ranks (ranks log the same steps).
std::vector<double> max_over_ranks(const RunModel& run, std::vector<double> RankSeries::*field) {
  std::vector<double> out;
  for (const RankSeries& s : run.ranks()) {
    const auto& v = s.*field;
    if (out.empty()) out = v;
    for (size_t i = 0; i < std::min(out.size(), v.size()); ++i) out[i] = std::max(out[i], v[i]);
  }
  return out;
}

QColor faint(QColor c) {
  c.setAlpha(70);
  return c;
}

}  // namespace

LivePlots::LivePlots(QWidget* parent) : QWidget(parent) {
  auto* bar = new QHBoxLayout;
  axis_box_ = new QComboBox(this);
  axis_box_->addItems({tr("Step"), tr("Relative time (s)"), tr("Wall time")});
  smooth_slider_ = new QSlider(Qt::Horizontal, this);
  smooth_slider_->setRange(0, 99);
  smooth_slider_->setValue(static_cast<int>(smoothing_ * 100));
  smooth_slider_->setMaximumWidth(160);
  smooth_label_ = new QLabel(this);
  log_box_ = new QCheckBox(tr("Log y (losses)"), this);
  auto* reset = new QPushButton(tr("Reset zoom"), this);
  reset->setToolTip(tr("Every panel back to the whole run (or double-click a panel); wheel zooms x, drag pans"));
  keep_box_ = new QCheckBox(tr("Keep overlays for new runs"), this);
  auto* clear = new QPushButton(tr("Clear overlays"), this);
  bar->addWidget(new QLabel(tr("X axis:"), this));
  bar->addWidget(axis_box_);
  bar->addSpacing(12);
  bar->addWidget(new QLabel(tr("Smoothing:"), this));
  bar->addWidget(smooth_slider_);
  bar->addWidget(smooth_label_);
  bar->addSpacing(12);
  bar->addWidget(log_box_);
  bar->addWidget(reset);
  bar->addSpacing(12);
  bar->addWidget(keep_box_);
  bar->addWidget(clear);
  bar->addStretch(1);
  summary_ = new QLabel(this);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  sweep_bar_ = new QProgressBar(this);
  sweep_bar_->setVisible(false);
  sweep_bar_->setMaximumWidth(420);
  auto* status = new QHBoxLayout;
  status->addWidget(summary_, 1);
  status->addWidget(sweep_bar_);

  lr_ = make_panel(tr("Learning rate"), tr("lr"));
  time_ = make_panel(tr("Step time (rank 0)"), tr("ms"));
  throughput_ = make_panel(tr("Throughput (rank 0)"), tr("samples/s"));
  memory_ = make_panel(tr("Memory per rank (tensors)"), tr("MiB"));
  auto* grid_host = new QWidget(this);
  grid_ = new QGridLayout(grid_host);
  grid_->setContentsMargins(0, 0, 0, 0);
  grid_->setSpacing(4);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(grid_host);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  placeholder_ = new QLabel(this);
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  QFont big = font();
  big.setPointSize(big.pointSize() + 3);
  placeholder_->setFont(big);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(scroll);
  stack_->addWidget(placeholder_);
  logs_ = new QTabWidget(this);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(stack_);
  split->addWidget(logs_);
  split->setStretchFactor(0, 5);
  split->setStretchFactor(1, 1);
  auto* v = new QVBoxLayout(this);
  v->addLayout(bar);
  v->addLayout(status);
  v->addWidget(split, 1);

  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, &LivePlots::refresh);
  connect(axis_box_, &QComboBox::currentIndexChanged, this, [this](int i) { set_axis(static_cast<Axis>(i)); });
  connect(smooth_slider_, &QSlider::valueChanged, this, [this](int v) { set_smoothing(v / 100.0); });
  connect(log_box_, &QCheckBox::toggled, this, &LivePlots::set_log_y);
  connect(reset, &QPushButton::clicked, this, &LivePlots::reset_zoom);
  connect(clear, &QPushButton::clicked, this, &LivePlots::clear_overlays);
  set_smoothing(smoothing_);
  set_axis(Axis::Step);
  lay_out_panels();
}

LivePlots::~LivePlots() = default;

PlotPanel* LivePlots::make_panel(const QString& title, const QString& y_label) {
  auto* p = new PlotPanel(title, y_label, this);
  link(p);
  return p;
}

// One x range for every panel: a zoom or pan in one moves all; the cursor follows the mouse
// over all of them; a double-click resets.
void LivePlots::link(PlotPanel* p) {
  connect(p->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this, p](const QCPRange& r) {
    if (syncing_) return;
    syncing_ = true;
    zoom_ = std::make_pair(r.lower, r.upper);
    for (PlotPanel* q : panels()) {
      if (q != p) q->xAxis->setRange(r);
      q->fit_y();
    }
    syncing_ = false;
  });
  connect(p, &PlotPanel::hovered, this, [this, p](double x) {
    for (PlotPanel* q : panels())
      if (q != p) q->show_cursor(x);
  });
  connect(p, &PlotPanel::left, this, [this] {
    for (PlotPanel* q : panels()) q->hide_cursor();
  });
  connect(p, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) { reset_zoom(); });
  if (p->xAxis->label().isEmpty()) p->xAxis->setLabel(tr("step"));
}

std::vector<PlotPanel*> LivePlots::panels() const {
  std::vector<PlotPanel*> out;
  for (const std::string& k : loss_keys()) out.push_back(loss_panels_.at(k));
  for (PlotPanel* p : {lr_, time_, throughput_, memory_}) out.push_back(p);
  return out;
}

std::vector<std::string> LivePlots::loss_keys() const {
  std::vector<std::string> keys;
  if (loss_panels_.count("loss")) keys.push_back("loss");
  for (const auto& [k, p] : loss_panels_)
    if (k != "loss") keys.push_back(k);
  return keys;
}

PlotPanel* LivePlots::loss_panel(const std::string& key) const {
  auto it = loss_panels_.find(key);
  return it == loss_panels_.end() ? nullptr : it->second;
}

QCustomPlot* LivePlots::loss_plot() const {
  if (PlotPanel* p = loss_panel("loss")) return p;
  return loss_panels_.empty() ? nullptr : loss_panels_.begin()->second;
}

QCustomPlot* LivePlots::memory_plot() const { return memory_; }

// A panel per loss key of the main run: the total alone when there is one key, else the
// total and every term with its own axis.
void LivePlots::sync_loss_panels(const std::vector<std::string>& keys) {
  const std::set<std::string> want(keys.begin(), keys.end());
  bool changed = false;
  for (auto it = loss_panels_.begin(); it != loss_panels_.end();) {
    if (want.count(it->first)) {
      ++it;
      continue;
    }
    it->second->deleteLater();
    it = loss_panels_.erase(it);
    changed = true;
  }
  for (const std::string& k : keys) {
    if (loss_panels_.count(k)) continue;
    const QString name = QString::fromStdString(k);
    PlotPanel* p = make_panel(k == "loss" ? tr("Loss (total)") : tr("Loss: %1").arg(name), name);
    p->set_log_y(log_y_);
    loss_panels_[k] = p;
    changed = true;
  }
  if (changed) {
    set_axis(axis_);
    lay_out_panels();
  }
}

void LivePlots::lay_out_panels() {
  const std::vector<PlotPanel*> all = panels();
  for (PlotPanel* p : all) grid_->removeWidget(p);
  const int n = static_cast<int>(all.size()), cols = n <= 5 ? 3 : 4;
  for (int i = 0; i < n; ++i) {
    int row = i / cols, col = i % cols, span = 1;
    if (all[static_cast<size_t>(i)] == memory_) {  // memory gets the rest of its row, at least two columns
      span = cols - col;
      if (span < 2) row += 1, col = 0, span = cols;
    }
    grid_->addWidget(all[static_cast<size_t>(i)], row, col, 1, span);
  }
}

void LivePlots::set_run(const RunModel* run) {
  if (run != run_) zoom_.reset();
  run_ = run;
  schedule_refresh();
}

void LivePlots::set_overlays(std::vector<const RunModel*> runs) {
  overlays_ = std::move(runs);
  schedule_refresh();
}

void LivePlots::clear_overlays() {
  const bool had = !overlays_.empty();
  overlays_.clear();
  schedule_refresh();
  if (had) emit overlaysCleared();
}

bool LivePlots::keep_overlays() const { return keep_box_->isChecked(); }

void LivePlots::set_live(bool running) {
  live_ = running;
  schedule_refresh();
}

void LivePlots::set_sweep(int current, int total, const QString& name) {
  sweep_bar_->setVisible(total > 0);
  if (total <= 0) return;
  sweep_bar_->setRange(0, total);
  sweep_bar_->setValue(std::min(current, total));
  sweep_bar_->setFormat(current >= total ? tr("sweep done: %1 runs").arg(total)
                                         : tr("sweep: run %1 of %2 (%3)").arg(current + 1).arg(total).arg(name));
}

void LivePlots::set_axis(Axis a) {
  if (a != axis_) zoom_.reset();
  axis_ = a;
  if (axis_box_->currentIndex() != static_cast<int>(a)) axis_box_->setCurrentIndex(static_cast<int>(a));
  const QString label = a == Axis::Step ? tr("step") : a == Axis::RelativeTime ? tr("seconds since start") : tr("time");
  for (PlotPanel* p : panels()) {
    if (a == Axis::WallTime) {
      auto t = QSharedPointer<QCPAxisTickerDateTime>::create();
      t->setDateTimeFormat("HH:mm:ss");
      p->xAxis->setTicker(t);
    } else {
      p->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    p->xAxis->setLabel(label);
  }
  schedule_refresh();
}

void LivePlots::set_smoothing(double weight) {
  smoothing_ = std::clamp(weight, 0.0, 0.99);
  smooth_label_->setText(QString::number(smoothing_, 'f', 2));
  if (smooth_slider_->value() != static_cast<int>(std::lround(smoothing_ * 100)))
    smooth_slider_->setValue(static_cast<int>(std::lround(smoothing_ * 100)));
  schedule_refresh();
}

void LivePlots::set_log_y(bool log) {
  log_y_ = log;
  if (log_box_->isChecked() != log) log_box_->setChecked(log);
  for (auto& [k, p] : loss_panels_) p->set_log_y(log);
}

void LivePlots::reset_zoom() {
  zoom_.reset();
  apply_x_range();
}

void LivePlots::schedule_refresh() {
  if (!timer_->isActive()) timer_->start();
}

QString LivePlots::run_label(const RunModel& run) const {
  const auto id = run_id ? run_id(run.run_dir()) : std::nullopt;
  return id ? QString("#%1 %2").arg(*id).arg(run.name()) : run.name();
}

namespace {

QColor color_of(const LivePlots& live, const RunModel& run) {
  const auto id = live.run_id ? live.run_id(run.run_dir()) : std::nullopt;
  return run_color(id ? *id : static_cast<int64_t>(qHash(run.run_dir()) % 1000));
}

}  // namespace

std::vector<double> LivePlots::x_of(const RunModel& run, int rank) const {
  if (rank < 0 || static_cast<size_t>(rank) >= run.ranks().size()) return {};
  const RankSeries& s = run.ranks()[static_cast<size_t>(rank)];
  if (axis_ == Axis::Step) return s.step;
  if (axis_ == Axis::RelativeTime) return s.time_s;
  std::vector<double> out(s.time_s);
  for (double& t : out) t += std::max(0.0, run.start_wall_s());
  return out;
}

void LivePlots::add_run_curves(const RunModel& run, bool main) {
  const QString label = run_label(run);
  const QColor color = color_of(*this, run);
  const std::vector<double> x = x_of(run, 0);
  for (const auto& [key, values] : run.losses()) {
    PlotPanel* p = loss_panel(key);
    if (!p) continue;
    auto& raw = p->add_curve(label + " (raw)", faint(color), Qt::SolidLine, 1, false);
    raw.set_data(x, values);
    p->add_curve(label, color, Qt::SolidLine, main ? 1.6 : 1.2)
        .set_data(x, EnvelopeSampler::smooth(values, smoothing_));
    if (main) loss_points_[key] = raw.size();
  }
  lr_->add_curve(label, color).set_data(x, run.lr());
  if (!run.ranks().empty()) {
    const RankSeries& r0 = run.ranks()[0];
    if (main) {
      const std::pair<QString, const std::vector<double>*> parts[] = {{tr("forward"), &r0.forward_ms},
                                                                      {tr("backward"), &r0.backward_ms},
                                                                      {tr("communication"), &r0.comm_ms},
                                                                      {tr("optimizer"), &r0.optim_ms}};
      for (int i = 0; i < 4; ++i) time_->add_curve(parts[i].first, series_color(i)).set_data(x, *parts[i].second);
    }
    time_->add_curve(tr("%1 total").arg(label), color, main ? Qt::SolidLine : Qt::DashLine, 1.6)
        .set_data(x, r0.total_ms);
    throughput_->add_curve(label, color, main ? Qt::SolidLine : Qt::DashLine).set_data(x, r0.samples_per_s);
  }
  add_memory_curves(run, main);
}

// The main run per rank (current, peak; CUDA's cache as reserved; on CPU the process RSS,
// hidden until its legend entry is clicked); other runs: their peak, largest over ranks.
void LivePlots::add_memory_curves(const RunModel& run, bool main) {
  if (!main) {
    memory_->add_curve(tr("%1 peak").arg(run_label(run)), color_of(*this, run), Qt::DashLine, 1.4)
        .set_data(x_of(run, 0), scaled(max_over_ranks(run, &RankSeries::mem_peak), kPerMiB));
    return;
  }
  for (size_t r = 0; r < run.ranks().size(); ++r) {
    const RankSeries& s = run.ranks()[r];
    const std::vector<double> xr = x_of(run, static_cast<int>(r));
    const QColor c = series_color(static_cast<int>(r));
    memory_->add_curve(tr("rank %1 current").arg(r), c).set_data(xr, scaled(s.mem_current, kPerMiB));
    memory_->add_curve(tr("rank %1 peak").arg(r), c, Qt::DashLine, 1.4).set_data(xr, scaled(s.mem_peak, kPerMiB));
    const bool cuda = QString::fromStdString(s.device).startsWith("cuda");
    const auto& extra = cuda ? s.mem_reserved : s.rss;
    if (std::none_of(extra.begin(), extra.end(), [](double v) { return v > 0; })) continue;
    const QString name = cuda ? tr("rank %1 reserved (CUDA cache)").arg(r) : tr("rank %1 RSS (whole process)").arg(r);
    memory_->add_curve(name, c, Qt::DotLine, 1, true, !cuda).set_data(xr, scaled(extra, kPerMiB));
  }
}

// The device limit and the planner's predicted peak as marked lines (labels when off-scale).
void LivePlots::add_memory_levels(const RunModel& run) {
  if (const double limit = run.device_limit_bytes(); limit > 0)
    memory_->add_level(limit * kPerMiB, tr("device limit per rank %1").arg(LayoutView::bytes_text(limit)),
                       QColor(200, 30, 30));
  const auto parsed = config::parse_experiment(run.config().is_object() ? run.config() : nlohmann::json::object());
  if (!parsed.problems.empty() || !run.config().is_object()) return;
  const auto p = CoreChecks::predict(parsed.config);
  if (!p) return;
  std::map<int64_t, int> first_rank;  // one line per distinct predicted peak
  for (const auto& r : p->ranks) first_rank.emplace(r.peak, r.rank);
  for (const auto& [peak, rank] : first_rank) {
    const QString who = first_rank.size() == 1 ? tr("per rank") : tr("rank %1").arg(rank);
    memory_->add_level(static_cast<double>(peak) * kPerMiB,
                       tr("predicted peak %1 %2").arg(who, LayoutView::bytes_text(static_cast<double>(peak))),
                       QColor(70, 70, 70));
  }
}

void LivePlots::apply_x_range() {
  syncing_ = true;
  double lo = 0, hi = 1;
  bool any = false;
  for (PlotPanel* p : panels()) {
    double l, h;
    if (!p->data_x_range(l, h)) continue;
    lo = any ? std::min(lo, l) : l;
    hi = any ? std::max(hi, h) : h;
    any = true;
  }
  if (zoom_) lo = zoom_->first, hi = zoom_->second;
  for (PlotPanel* p : panels()) {
    p->xAxis->setRange(lo, hi > lo ? hi : lo + 1);
    p->fit_y();
  }
  syncing_ = false;
}

void LivePlots::refresh() {
  std::vector<std::string> keys;
  if (run_)
    for (const auto& [k, v] : run_->losses()) keys.push_back(k);
  sync_loss_panels(keys);
  for (PlotPanel* p : panels()) p->clear_curves();
  loss_points_.clear();
  if (run_) {
    add_run_curves(*run_, true);
    for (const RunModel* o : overlays_)
      if (o && o != run_) add_run_curves(*o, false);
    add_memory_levels(*run_);
  }
  apply_x_range();
  update_header();
  update_logs();
}

QString LivePlots::placeholder_text() const { return placeholder_->text(); }

bool LivePlots::showing_placeholder() const { return stack_->currentIndex() == 1; }

QString LivePlots::summary_text() const { return summary_->text(); }

void LivePlots::update_header() {
  if (!run_) {
    summary_->setText(tr("no run loaded"));
    placeholder_->setText(tr("No run: launch one from Setup, or open one from History or a run folder."));
    stack_->setCurrentIndex(1);
    return;
  }
  const int world = run_->config().contains("parallel")
                        ? run_->config()["parallel"].value("sp", 1) * run_->config()["parallel"].value("dp", 1)
                        : static_cast<int>(run_->ranks().size());
  int hello = 0;
  for (const RankSeries& s : run_->ranks()) hello += s.device.empty() ? 0 : 1;
  const bool empty = run_->step_events() == 0;
  if (empty)
    placeholder_->setText(live_ ? tr("Starting ranks… %1 of %2 rank(s) reported; the plots appear with the first "
                                     "step.\n%3")
                                      .arg(hello)
                                      .arg(world)
                                      .arg(run_->run_dir())
                                : tr("%1 logged no steps: it ended before its first step (see the rank logs below, "
                                     "and History for the reason).")
                                      .arg(run_label(*run_)));
  stack_->setCurrentIndex(empty ? 1 : 0);
  const RunProgress progress = RunProgress::of(*run_);
  QString text = QString("<b>%1</b> — %2").arg(run_label(*run_).toHtmlEscaped(), progress.text(live_));
  if (!run_->steps().empty()) text += tr(" · mean step %1 ms").arg(run_->mean_step_ms(0), 0, 'f', 1);
  text += tr(" · %1 rank(s)").arg(run_->ranks().size());
  if (!overlays_.empty()) text += tr(" · %1 overlaid").arg(overlays_.size());
  summary_->setText(text);
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
