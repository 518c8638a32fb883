// The budget slider is logarithmic (64 MiB .. 256 GiB); rows compare their reserved bytes
// with it as `halo plan` does. Planning is pure prediction, so any device kind can be planned.
#include "PlannerView.h"

#include <unistd.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include <qcustomplot.h>

#include "LayoutView.h"
#include "config/ExperimentConfig.h"
#include "memory/StepTime.h"

namespace halo::gui {

using nlohmann::json;

namespace {

constexpr double kLo = 64.0 * (1 << 20), kHi = 256.0 * (1ll << 30);  // slider ends in bytes
constexpr int kSteps = 1000;

int64_t slider_bytes(int v) {
  return static_cast<int64_t>(std::llround(kLo * std::pow(kHi / kLo, v / double(kSteps))));
}
int slider_pos(int64_t b) {
  const double t = std::log(std::clamp(static_cast<double>(b), kLo, kHi) / kLo) / std::log(kHi / kLo);
  return static_cast<int>(std::lround(t * kSteps));
}

enum Col { kDevices, kSetup, kSp, kDp, kPeak, kReserved, kActivations, kStepS, kRelative, kFits, kNote, kCols };

}  // namespace

PlannerView::PlannerView(QWidget* parent) : QWidget(parent) {
  kind_ = new QComboBox(this);
  for (std::string_view n : config::names<config::Device>()) kind_->addItem(QString::fromUtf8(n.data(), n.size()));
  kind_->setToolTip(tr("Plan for this device kind, whether or not this machine has it"));
  devices_ = new QLineEdit("1,2,4,8", this);
  devices_->setMaximumWidth(140);
  devices_->setToolTip(tr("Device counts to plan for, comma-separated"));
  budget_ = new QSlider(Qt::Horizontal, this);
  budget_->setRange(0, kSteps);
  budget_label_ = new QLabel(this);
  budget_label_->setMinimumWidth(170);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Plan for:"), this));
  bar->addWidget(kind_);
  bar->addWidget(new QLabel(tr("devices:"), this));
  bar->addWidget(devices_);
  bar->addSpacing(12);
  bar->addWidget(new QLabel(tr("Budget per rank:"), this));
  bar->addWidget(budget_, 1);
  bar->addWidget(budget_label_);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  bars_ = new QCustomPlot(this);
  bars_->setMinimumHeight(220);
  bars_->plotLayout()->insertRow(0);
  bars_->plotLayout()->addElement(
      0, 0,
      new QCPTextElement(bars_, tr("Predicted memory per rank by setup"), QFont(font().family(), 9, QFont::Bold)));
  bars_->yAxis->setLabel(tr("GiB per rank (log)"));
  bars_->yAxis->setScaleType(QCPAxis::stLogarithmic);
  bars_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  table_ = new QTableWidget(0, kCols, this);
  table_->setHorizontalHeaderLabels({tr("devices"), tr("setup"), tr("sp"), tr("dp"), tr("peak / rank"),
                                     tr("reserved / rank"), tr("activation peak"), tr("step (est.)"),
                                     tr("time / sample vs none×1"), tr("fits"), tr("")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setStretchLastSection(true);
  use_ = new QPushButton(tr("Use this row in Setup"), this);
  launch_ = new QPushButton(tr("Launch this row"), this);
  auto* actions = new QHBoxLayout;
  actions->addWidget(use_);
  actions->addWidget(launch_);
  actions->addStretch(1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(bars_);
  split->addWidget(table_);
  split->setStretchFactor(1, 2);
  auto* v = new QVBoxLayout(this);
  v->addLayout(bar);
  v->addWidget(summary_);
  v->addWidget(split, 1);
  v->addLayout(actions);

  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  timer_->setInterval(150);
  connect(timer_, &QTimer::timeout, this, &PlannerView::replan);
  connect(kind_, &QComboBox::currentTextChanged, this, [this] {
    budget_set_ = false;
    timer_->start();
  });
  connect(devices_, &QLineEdit::textChanged, this, [this] { timer_->start(); });
  connect(budget_, &QSlider::valueChanged, this, [this](int v) {
    budget_set_ = true;
    budget_bytes_ = slider_bytes(v);
    budget_label_->setText(LayoutView::bytes_text(static_cast<double>(budget_bytes_)));
    timer_->start();
  });
  connect(use_, &QPushButton::clicked, this, [this] { emit_row(false); });
  connect(launch_, &QPushButton::clicked, this, [this] { emit_row(true); });
  connect(table_, &QTableWidget::currentCellChanged, this, [this](int, int, int, int) { draw_bars(); });
  replan();
}

void PlannerView::set_experiment(const json& experiment) {
  const bool kind_changed =
      !experiment_.is_object() || experiment_.value("parallel", json::object()).value("device", "") !=
                                      experiment.value("parallel", json::object()).value("device", "");
  experiment_ = experiment;
  if (kind_changed && experiment.contains("parallel") && experiment["parallel"].is_object())
    kind_->setCurrentText(QString::fromStdString(experiment["parallel"].value("device", "cpu")));
  timer_->start();
}

void PlannerView::set_devices(const QString& counts) {
  devices_->setText(counts);
  replan();
}

void PlannerView::set_device_kind(const QString& kind) {
  kind_->setCurrentText(kind);
  replan();
}

void PlannerView::set_budget_bytes(int64_t bytes) {
  {
    const QSignalBlocker block(budget_);
    budget_->setValue(slider_pos(bytes));
  }
  budget_bytes_ = bytes;
  budget_label_->setText(LayoutView::bytes_text(static_cast<double>(bytes)));
  budget_set_ = true;
  replan();
}

int64_t PlannerView::budget_bytes() const { return budget_bytes_; }

QString PlannerView::problem_text() const { return plan_ ? QString() : summary_->text(); }

void PlannerView::replan() {
  timer_->stop();
  plan_.reset();
  const auto parsed = config::parse_experiment(experiment_.is_object() ? experiment_ : json::object());
  std::vector<int> counts;
  for (const QString& s : devices_->text().split(',', Qt::SkipEmptyParts))
    if (const int n = s.trimmed().toInt(); n >= 1 && n <= 1024) counts.push_back(n);
  config::ExperimentConfig cfg = parsed.config;
  const bool cuda = kind_->currentText().toStdString() == config::name_of(config::Device::Cuda);
  cfg.parallel.device = cuda ? config::Device::Cuda : config::Device::Cpu;
  if (!budget_set_) {  // `halo plan`'s default: 80 GiB on cuda, RAM / devices on cpu
    int most = 1;
    for (int d : counts) most = std::max(most, d);
    const int64_t ram = static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
    const QSignalBlocker block(budget_);
    budget_bytes_ = cuda ? int64_t{80} << 30 : ram / most;
    budget_->setValue(slider_pos(budget_bytes_));
    budget_label_->setText(LayoutView::bytes_text(static_cast<double>(budget_bytes())));
  }
  if (!parsed.problems.empty()) {
    summary_->setText(tr("Fix the experiment in Setup first:\n%1")
                          .arg(QString::fromStdString(config::describe_problems(parsed.problems))));
  } else if (counts.empty()) {
    summary_->setText(tr("Give device counts to plan for, e.g. 1,2,4,8."));
  } else {
    try {
      plan_ = memory::plan_setups(cfg, counts, budget_bytes(),
                                  memory::stored_rates(cuda ? memory::DeviceKind::Cuda : memory::DeviceKind::Cpu));
    } catch (const std::exception& e) {
      summary_->setText(tr("The planner cannot plan this experiment: %1").arg(e.what()));
    }
  }
  fill_table();
}

void PlannerView::fill_table() {
  shown_.clear();  // first: emptying the table moves the current cell, which redraws the bars
  table_->setRowCount(0);
  if (!plan_) return draw_bars();
  const memory::PlanResult& r = *plan_;
  const bool cuda = kind_->currentText() == "cuda";
  auto gib = [](int64_t b) { return LayoutView::bytes_text(static_cast<double>(b)); };
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const memory::PlanRow& row = r.rows[i];
    const int t = table_->rowCount();
    table_->insertRow(t);
    shown_.push_back(i);
    auto set = [&](int c, const QString& text) { table_->setItem(t, c, new QTableWidgetItem(text)); };
    set(kDevices, QString::number(row.devices));
    set(kSetup, QString::fromStdString(row.label));
    set(kSp, QString::number(row.sp));
    set(kDp, QString::number(row.dp));
    const bool fastest =
        std::find(r.fastest_per_devices.begin(), r.fastest_per_devices.end(), i) != r.fastest_per_devices.end();
    if (!row.problem.empty()) {
      set(kNote, tr("cannot run: %1").arg(QString::fromStdString(row.problem)));
      for (int c = 0; c < kCols; ++c)
        if (auto* it = table_->item(t, c)) it->setForeground(Qt::gray);
      continue;
    }
    set(kPeak, gib(row.peak));
    set(kReserved, cuda ? gib(row.reserved) : tr("(exact on cpu)"));
    set(kActivations, gib(row.activation_peak));
    set(kStepS, QString("%1 s").arg(row.step_s, 0, 'f', row.step_s < 1 ? 3 : 2));
    set(kRelative, QString("%1×").arg(row.relative_time, 0, 'f', 2));
    set(kFits, row.fits ? tr("yes") : tr("no"));
    table_->item(t, kFits)->setForeground(row.fits ? QColor(20, 130, 60) : QColor(190, 30, 30));
    set(kNote, r.recommended == i ? tr("★ recommended") : fastest ? tr("fastest on %1").arg(row.devices) : QString());
    if (r.recommended == i) {
      QFont bold = font();
      bold.setBold(true);
      for (int c = 0; c < kCols; ++c) {
        table_->item(t, c)->setFont(bold);
        table_->item(t, c)->setBackground(QColor(255, 246, 205));
      }
    }
  }
  table_->resizeColumnsToContents();
  if (r.recommended) table_->selectRow(static_cast<int>(*r.recommended));
  const QString kind = cuda ? tr("cuda (stored nominal GPU rates)") : tr("cpu (this machine's stored rates)");
  summary_->setText(r.recommended ? tr("Recommended: <b>%1</b> on %2 device(s), %3 per rank of a %4 budget — %5.")
                                        .arg(QString::fromStdString(r.rows[*r.recommended].label))
                                        .arg(r.rows[*r.recommended].devices)
                                        .arg(gib(r.rows[*r.recommended].reserved), gib(r.budget), kind)
                                  : tr("<b>Nothing fits in %1 per rank</b> on %2: add devices, lower data.height/width "
                                       "or data.batch, or use bf16.")
                                        .arg(gib(r.budget), kind));
  draw_bars();
}

void PlannerView::draw_bars() {
  bars_->clearPlottables();
  bars_->clearItems();
  if (!plan_) return bars_->replot();
  const double GiB = 1024.0 * 1024 * 1024;
  auto* fits = new QCPBars(bars_->xAxis, bars_->yAxis);
  auto* over = new QCPBars(bars_->xAxis, bars_->yAxis);
  fits->setName(tr("fits"));
  over->setName(tr("does not fit"));
  fits->setBrush(QColor(90, 170, 110));
  over->setBrush(QColor(220, 110, 100));
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  double lo = plan_->budget / GiB, hi = lo;
  for (size_t t = 0; t < shown_.size(); ++t) {
    const memory::PlanRow& row = plan_->rows[shown_[t]];
    ticker->addTick(static_cast<double>(t), QString("%1: %2").arg(row.devices).arg(QString::fromStdString(row.label)));
    if (!row.problem.empty()) continue;
    const double v = std::max(1e-6, row.reserved / GiB);
    (row.fits ? fits : over)->addData(static_cast<double>(t), v);
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  for (QCPBars* b : {fits, over}) b->setWidth(0.7);
  auto* line = new QCPItemStraightLine(bars_);
  line->setPen(QPen(QColor(40, 40, 40), 1.5, Qt::DashLine));
  line->point1->setCoords(0, plan_->budget / GiB);
  line->point2->setCoords(1, plan_->budget / GiB);
  auto* label = new QCPItemText(bars_);
  label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
  label->position->setCoords(0.005, plan_->budget / GiB);
  label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
  label->setText(tr("budget %1").arg(LayoutView::bytes_text(static_cast<double>(plan_->budget))));
  if (const int sel = table_->currentRow(); sel >= 0 && static_cast<size_t>(sel) < shown_.size()) {
    auto* mark = new QCPItemText(bars_);
    mark->position->setCoords(sel, hi * 1.6);
    mark->setText(QString::fromUtf8("▼"));
  }
  QFont small = font();
  small.setPointSize(7);
  bars_->xAxis->setTickLabelFont(small);
  bars_->xAxis->setTickLabelRotation(50);
  bars_->xAxis->setTicker(ticker);
  bars_->xAxis->setRange(-0.6, static_cast<double>(shown_.size()) - 0.4);
  bars_->yAxis->setRange(lo / 2, hi * 3);
  bars_->legend->setVisible(true);
  bars_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  bars_->replot();
}

std::optional<json> PlannerView::row_experiment(int row) const {
  if (!plan_ || row < 0 || static_cast<size_t>(row) >= shown_.size()) return std::nullopt;
  const memory::PlanRow& r = plan_->rows[shown_[static_cast<size_t>(row)]];
  if (!r.problem.empty()) return std::nullopt;
  config::ExperimentConfig cfg = config::parse_experiment(experiment_).config;
  cfg.parallel.device = kind_->currentText() == "cuda" ? config::Device::Cuda : config::Device::Cpu;
  json out = experiment_;
  out.merge_patch(config::to_json(r.applied_to(cfg)));
  out.erase("run_dir");
  return out;
}

void PlannerView::select_row(int row) { table_->selectRow(row); }

void PlannerView::emit_row(bool launch) {
  if (const auto e = row_experiment(table_->currentRow())) emit useRow(*e, launch);
}

}  // namespace halo::gui
