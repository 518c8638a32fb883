// Bars: one group per strategy; one bar per rank (measured) and a hatched predicted bar.
// Measured peak = largest memory.peak a rank reported; step time = mean total after step 0.
#include "StrategyView.h"

#include <QDateTime>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <iterator>

#include <qcustomplot.h>

#include "LayoutView.h"
#include "RunController.h"
#include "RunModel.h"
#include "SeriesColor.h"
#include "config/Enums.h"

namespace halo::gui {

using nlohmann::json;

namespace {

QCustomPlot* bar_plot(QWidget* parent, const QString& title, const QString& y) {
  auto* p = new QCustomPlot(parent);
  p->plotLayout()->insertRow(0);
  p->plotLayout()->addElement(0, 0, new QCPTextElement(p, title, QFont(parent->font().family(), 10, QFont::Bold)));
  p->yAxis->setLabel(y);
  p->legend->setVisible(true);
  p->setMinimumHeight(220);
  return p;
}
}  // namespace

StrategyView::StrategyView(QWidget* parent) : QWidget(parent), sweep_(new RunController(this)) {
  run_ = new QPushButton(tr("Run all six setups"), this);
  run_->setToolTip(
      tr("The setup form's experiment under none, checkpoint, tp-N and tp-N+checkpoint, one after another"));
  stop_ = new QPushButton(tr("Stop"), this);
  stop_->setEnabled(false);
  info_ = new QLabel(tr("Run a sweep, or select runs in History and press \"Compare strategies\"."), this);
  progress_ = new QProgressBar(this);
  progress_->setVisible(false);
  progress_->setMaximumWidth(360);
  info_->setWordWrap(true);
  memory_ = bar_plot(this, tr("Peak memory per rank"), tr("MiB"));
  time_ = bar_plot(this, tr("Step time"), tr("ms"));
  table_ = new QTableWidget(0, 7, this);
  table_->setHorizontalHeaderLabels({tr("strategy"), tr("ranks"), tr("measured peak / rank"), tr("predicted / rank"),
                                     tr("measured step ms"), tr("predicted step ms"), tr("run")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* bar = new QHBoxLayout;
  bar->addWidget(run_);
  bar->addWidget(stop_);
  bar->addWidget(info_, 1);
  bar->addWidget(progress_);
  auto* plots = new QHBoxLayout;
  plots->addWidget(memory_, 3);
  plots->addWidget(time_, 2);
  auto* v = new QVBoxLayout(this);
  v->addLayout(bar);
  v->addLayout(plots, 3);
  v->addWidget(table_, 1);
  connect(run_, &QPushButton::clicked, this, &StrategyView::sweepRequested);
  connect(stop_, &QPushButton::clicked, this, &StrategyView::stop_sweep);
  connect(sweep_, &RunController::finished, this, [this](bool ok, const QString& msg) {
    if (!sweep_->run_dir().isEmpty()) {
      try {
        add_run(RunModel::load(sweep_->run_dir()));
      } catch (const std::exception& e) {
        emit message(QString::fromUtf8(e.what()));
      }
    }
    if (!ok && !sweep_->killed()) emit message(msg);  // a stopped run is no error
    next_in_sweep();
  });
  redraw();
}

StrategyView::~StrategyView() = default;

std::vector<json> StrategyView::variants(const json& experiment) {
  const int sp = experiment.contains("parallel") ? experiment["parallel"].value("sp", 2) : 2;
  const int n = sp > 1 ? sp : 2;
  std::vector<json> out;
  using config::ShardState;
  using config::Strategy;
  const std::vector<std::pair<Strategy, ShardState>> setups{{Strategy::None, ShardState::None},
                                                            {Strategy::Checkpoint, ShardState::None},
                                                            {Strategy::Tp, ShardState::None},
                                                            {Strategy::TpCheckpoint, ShardState::None},
                                                            {Strategy::TpCheckpoint, ShardState::Gradients},
                                                            {Strategy::TpCheckpoint, ShardState::Weights}};
  for (const auto& [strategy, zero] : setups) {
    const int ranks = config::shards(strategy) ? n : 1;
    json v = experiment;
    v["parallel"]["strategy"] = config::name_of(strategy);
    v["parallel"]["sp"] = ranks;
    v["parallel"]["shard_state"] = config::name_of(zero);
    std::string zero_label(config::zero_suffix(zero));  // "+zero2" -> "-zero2"
    if (!zero_label.empty()) zero_label[0] = '-';
    const std::string label =
        (!config::shards(strategy) ? config::name_of(strategy)
                                   : "tp" + std::to_string(n) + (config::checkpoints(strategy) ? "-checkpoint" : "")) +
        zero_label;
    v["name"] = experiment.value("name", "experiment") + "-" + label;
    v.erase("run_dir");
    out.push_back(std::move(v));
  }
  return out;
}

void StrategyView::set_runs(std::vector<std::unique_ptr<RunModel>> runs) {
  runs_ = std::move(runs);
  redraw();
}

void StrategyView::add_run(std::unique_ptr<RunModel> run) {
  runs_.push_back(std::move(run));
  redraw();
}

void StrategyView::start_sweep(const json& experiment, const QString& runs_root, const QString& db_path) {
  if (sweeping()) return emit message(tr("a sweep is already going"));
  runs_.clear();
  const QString stamp = QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss");
  sweep_dir_ = QDir(runs_root).absoluteFilePath(
      QString("sweep-%1-%2").arg(QString::fromStdString(experiment.value("name", "experiment")), stamp));
  runs_root_ = sweep_dir_;
  stopped_ = false;
  sweep_->db_path = db_path;
  queue_.clear();
  for (auto& v : variants(experiment)) queue_.push_back(std::move(v));
  sweep_total_ = static_cast<int>(queue_.size());
  sweep_index_ = -1;
  progress_->setRange(0, sweep_total_);
  progress_->setValue(0);
  progress_->setVisible(true);
  run_->setEnabled(false);
  stop_->setEnabled(true);
  redraw();
  next_in_sweep();
}

void StrategyView::stop_sweep() {
  stopped_ = stopped_ || !queue_.empty() || sweep_->running();
  queue_.clear();
  sweep_->stop();
}

void StrategyView::set_can_start(bool can) { run_->setEnabled(can && !sweeping()); }

bool StrategyView::sweeping() const { return sweep_->running() || !queue_.empty(); }

void StrategyView::next_in_sweep() {
  progress_->setValue(sweep_index_ + 1);
  if (queue_.empty()) {
    run_->setEnabled(true);
    stop_->setEnabled(false);
    progress_->setFormat(stopped_ ? tr("sweep stopped: %1 of %2 run(s)").arg(runs_.size()).arg(sweep_total_)
                                  : tr("sweep done: %1 run(s)").arg(runs_.size()));
    info_->setText(stopped_ ? tr("Sweep stopped after %1 run(s), in %2").arg(runs_.size()).arg(sweep_dir_)
                            : tr("Sweep done: %1 run(s), in %2").arg(runs_.size()).arg(sweep_dir_));
    emit sweepFinished();
    return;
  }
  json next = std::move(queue_.front());
  queue_.pop_front();
  ++sweep_index_;
  const QString name = QString::fromStdString(next.value("name", ""));
  progress_->setFormat(tr("run %1 of %2: %3").arg(sweep_index_ + 1).arg(sweep_total_).arg(name));
  info_->setText(tr("Running %1 (%2 left after it)… the Live tab follows it.").arg(name).arg(queue_.size()));
  if (!sweep_->start(next, runs_root_)) return next_in_sweep();
  emit sweepRunStarted(sweep_index_, sweep_total_, name);
}

void StrategyView::redraw() {
  for (QCustomPlot* p : {memory_, time_}) {
    p->clearPlottables();
    p->clearItems();
  }
  const double MiB = 1024.0 * 1024.0;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  int max_ranks = 0;
  for (const auto& r : runs_) max_ranks = std::max<int>(max_ranks, static_cast<int>(r->ranks().size()));
  auto* mem_group = new QCPBarsGroup(memory_);
  auto* time_group = new QCPBarsGroup(time_);
  std::vector<QCPBars*> rank_bars;
  for (int k = 0; k < max_ranks; ++k) {
    auto* b = new QCPBars(memory_->xAxis, memory_->yAxis);
    b->setName(tr("rank %1 measured").arg(k));
    b->setBrush(series_color(k));
    b->setPen(QPen(series_color(k).darker(130)));
    b->setWidth(0.8 / (max_ranks + 1));
    b->setBarsGroup(mem_group);
    rank_bars.push_back(b);
  }
  auto* pred = new QCPBars(memory_->xAxis, memory_->yAxis);
  pred->setName(tr("predicted / rank"));
  pred->setBrush(QBrush(QColor(90, 90, 90), Qt::BDiagPattern));
  pred->setPen(QPen(QColor(60, 60, 60)));
  pred->setWidth(0.8 / (max_ranks + 1));
  pred->setBarsGroup(mem_group);
  auto* t_meas = new QCPBars(time_->xAxis, time_->yAxis);
  t_meas->setName(tr("measured (rank 0)"));
  t_meas->setBrush(series_color(0));
  t_meas->setWidth(0.35);
  t_meas->setBarsGroup(time_group);
  auto* t_pred = new QCPBars(time_->xAxis, time_->yAxis);
  t_pred->setName(tr("predicted"));
  t_pred->setBrush(QBrush(QColor(90, 90, 90), Qt::BDiagPattern));
  t_pred->setWidth(0.35);
  t_pred->setBarsGroup(time_group);
  table_->setRowCount(static_cast<int>(runs_.size()));
  double ymax = 1, tmax = 1;
  for (size_t i = 0; i < runs_.size(); ++i) {
    const RunModel& run = *runs_[i];
    const double x = static_cast<double>(i + 1);
    ticker->addTick(x, run.strategy_label());
    double worst = 0;
    for (size_t k = 0; k < run.ranks().size(); ++k) {
      const double peak = run.peak_bytes(static_cast<int>(k));
      worst = std::max(worst, peak);
      rank_bars[k]->addData(x, peak / MiB);
      ymax = std::max(ymax, peak / MiB);
    }
    std::optional<double> pb;
    if (predict_bytes) pb = predict_bytes(run.config());
    if (pb) pred->addData(x, *pb / MiB), ymax = std::max(ymax, *pb / MiB);
    const double ms = run.mean_step_ms(0);
    t_meas->addData(x, ms);
    tmax = std::max(tmax, ms);
    std::optional<double> pm;
    if (predict_ms) pm = predict_ms(run.config());
    if (pm) t_pred->addData(x, *pm), tmax = std::max(tmax, *pm);
    const int row = static_cast<int>(i);
    table_->setItem(row, 0, new QTableWidgetItem(run.strategy_label()));
    table_->setItem(row, 1, new QTableWidgetItem(QString::number(run.ranks().size())));
    table_->setItem(row, 2, new QTableWidgetItem(LayoutView::bytes_text(worst)));
    table_->setItem(row, 3, new QTableWidgetItem(pb ? LayoutView::bytes_text(*pb) : tr("—")));
    table_->setItem(row, 4, new QTableWidgetItem(QString::number(ms, 'f', 1)));
    table_->setItem(row, 5, new QTableWidgetItem(pm ? QString::number(*pm, 'f', 1) : tr("—")));
    table_->setItem(row, 6, new QTableWidgetItem(run.run_dir()));
  }
  if (!predict_bytes) memory_->removePlottable(pred);
  if (!predict_ms) time_->removePlottable(t_pred);
  for (QCustomPlot* p : {memory_, time_}) {
    p->xAxis->setTicker(ticker);
    p->xAxis->setRange(0.3, runs_.size() + 0.7);
    p->legend->setVisible(!runs_.empty());
  }
  memory_->yAxis->setRange(0, ymax * 1.15);
  time_->yAxis->setRange(0, tmax * 1.15);
  memory_->replot();
  time_->replot();
  table_->resizeColumnsToContents();
}

}  // namespace halo::gui
