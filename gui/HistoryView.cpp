// Each refresh opens the history read-only (WAL readers never block the launcher) and
// fills the table; edits go through the CLI so the history keeps a single writer.
#include "HistoryView.h"

#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <filesystem>
#include <map>

#include "LayoutView.h"
#include "RunController.h"
#include "RunProgress.h"
#include "SortArrowStyle.h"
#include "store/HistoryDb.h"
#include "util/Error.h"

namespace halo::gui {

namespace {

// The history's devices JSON ([{"rank":0,"device":"cpu","host":"vm"}, ...]) as "2 × cpu on vm".
QString devices_text(const std::string& devices) {
  const auto j = nlohmann::json::parse(devices, nullptr, false);
  if (j.is_discarded() || !j.is_array()) return QString::fromStdString(devices);
  std::map<std::string, int> count;
  for (const auto& d : j)
    if (d.is_object())
      ++count[d.value("device", "?") + (d.value("host", "").empty() ? "" : " on " + d.value("host", ""))];
  QStringList parts;
  for (const auto& [what, n] : count) parts << QString("%1 × %2").arg(n).arg(QString::fromStdString(what));
  return parts.join(", ");
}

// A cell shown as text but sorted by a number (empty cells sort first).
class NumberItem : public QTableWidgetItem {
 public:
  NumberItem(const QString& text, std::optional<double> key) : QTableWidgetItem(text) {
    if (key) setData(Qt::UserRole + 1, *key);
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  bool operator<(const QTableWidgetItem& other) const override {
    const QVariant a = data(Qt::UserRole + 1), b = other.data(Qt::UserRole + 1);
    if (!a.isValid() || !b.isValid()) return !a.isValid() && b.isValid();
    return a.toDouble() < b.toDouble();
  }
};

int64_t total_steps(const std::string& config) {
  const auto j = nlohmann::json::parse(config, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("schedule") || !j["schedule"].is_object()) return 0;
  return j["schedule"].value("steps", int64_t{0});
}

}  // namespace

QString HistoryView::sweep_of(const QString& run_dir) {
  const QString parent = QFileInfo(QDir::cleanPath(run_dir)).dir().dirName();
  return parent.startsWith("sweep-") ? parent : QString();
}

HistoryView::HistoryView(QWidget* parent) : QWidget(parent) {
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("filter: name, strategy, folder…"));
  status_ = new QComboBox(this);
  status_->addItem(tr("any status"));
  for (auto s : {store::RunStatus::Running, store::RunStatus::Finished, store::RunStatus::Failed,
                 store::RunStatus::Killed, store::RunStatus::Interrupted})
    status_->addItem(QString::fromStdString(store::to_string(s)));
  tag_ = new QLineEdit(this);
  tag_->setPlaceholderText(tr("tag"));
  auto* refresh = new QPushButton(tr("Refresh"), this);
  auto* bar = new QHBoxLayout;
  bar->addWidget(filter_, 2);
  bar->addWidget(status_);
  bar->addWidget(tag_, 1);
  bar->addWidget(refresh);

  table_ = new QTableWidget(0, kColumns, this);
  table_->setHorizontalHeaderLabels({tr("id"), tr("name"), tr("status"), tr("steps"), tr("strategy"), tr("sp×dp"),
                                     tr("devices"), tr("started"), tr("tags"), tr("final loss"), tr("best OLS"),
                                     tr("peak / rank"), tr("step ms"), tr("duration"), tr("progress"), tr("sweep"),
                                     tr("folder")});
  // The figures beside the status; the folder last (it stretches).
  const Column order[] = {kId,       kName,  kStatus,   kSteps, kProgress, kFinalLoss, kBestScore, kPeak, kStepMs,
                          kDuration, kSweep, kStrategy, kMesh,  kDevices,  kStarted,   kTags,      kDir};
  for (int v = 0; v < kColumns; ++v)
    table_->horizontalHeader()->moveSection(table_->horizontalHeader()->visualIndex(order[v]), v);
  table_->horizontalHeader()->setStyle(new SortArrowStyle(table_->horizontalHeader()->style()->name()));
  table_->horizontalHeader()->setSortIndicator(kId, Qt::DescendingOrder);  // newest first
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setSortingEnabled(true);

  auto button = [this](const QString& text, auto fn) {
    auto* b = new QPushButton(text, this);
    connect(b, &QPushButton::clicked, this, fn);
    return b;
  };
  auto* actions = new QHBoxLayout;
  actions->addWidget(button(tr("Open"), [this] {
    const auto dirs = selected_run_dirs();
    if (dirs.isEmpty()) return emit message(tr("select a run first"));
    const int row = table_->currentRow();
    const bool running = row >= 0 && table_->item(row, kStatus)->text() == "RUNNING";
    emit openRun(dirs.front(), running ? table_->item(row, kStatus)->data(Qt::UserRole).toLongLong() : 0);
  }));
  actions->addWidget(button(tr("Overlay selected"), [this] { emit overlayRuns(selected_run_dirs()); }));
  actions->addWidget(button(tr("Compare strategies"), [this] {
    // One run of a sweep picked: the whole sweep.
    QStringList dirs = selected_run_dirs();
    if (dirs.size() == 1 && !sweep_of(dirs.front()).isEmpty()) dirs = sweep_run_dirs(sweep_of(dirs.front()));
    emit compareRuns(dirs);
  }));
  actions->addWidget(button(tr("Clone into setup"), [this] {
    const int row = table_->currentRow();
    if (row < 0) return emit message(tr("select a run first"));
    auto j =
        nlohmann::json::parse(table_->item(row, kName)->data(Qt::UserRole).toString().toStdString(), nullptr, false);
    if (j.is_discarded()) return emit message(tr("run %1 has no readable config in the history").arg(current_id()));
    emit cloneRun(j);
  }));
  actions->addWidget(button(tr("Add tag…"), [this] {
    const int64_t id = current_id();
    if (id <= 0) return emit message(tr("select a run first"));
    const QString t = QInputDialog::getText(this, tr("Tag run %1").arg(id), tr("Tag:"));
    if (!t.trimmed().isEmpty()) run_cli({"runs", "tag", QString::number(id), t.trimmed()});
  }));
  actions->addWidget(button(tr("Add note…"), [this] {
    const int64_t id = current_id();
    if (id <= 0) return emit message(tr("select a run first"));
    const QString t = QInputDialog::getMultiLineText(this, tr("Note on run %1").arg(id), tr("Note:"));
    if (!t.trimmed().isEmpty()) run_cli({"runs", "note", QString::number(id), t.trimmed()});
  }));
  actions->addWidget(button(tr("Export…"), [this] {
    const auto dirs = selected_run_dirs();
    if (dirs.isEmpty()) return emit message(tr("select a run first"));
    emit exportRun(dirs.front());
  }));
  actions->addStretch(1);

  notes_ = new QPlainTextEdit(this);
  notes_->setReadOnly(true);
  notes_->setPlaceholderText(tr("Notes and failure reason of the current run"));
  info_ = new QLabel(this);
  auto_refresh_ = new QTimer(this);
  auto_refresh_->setSingleShot(true);
  auto_refresh_->setInterval(2000);
  connect(auto_refresh_, &QTimer::timeout, this, &HistoryView::refresh);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(notes_);
  split->setStretchFactor(0, 4);
  auto* v = new QVBoxLayout(this);
  v->addLayout(bar);
  v->addWidget(split, 1);
  v->addLayout(actions);
  v->addWidget(info_);

  connect(refresh, &QPushButton::clicked, this, &HistoryView::refresh);
  connect(filter_, &QLineEdit::textChanged, this, &HistoryView::refresh);
  connect(status_, &QComboBox::currentIndexChanged, this, &HistoryView::refresh);
  connect(tag_, &QLineEdit::editingFinished, this, &HistoryView::refresh);
  connect(table_, &QTableWidget::currentCellChanged, this, &HistoryView::show_notes);
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    emit openRun(table_->item(row, kDir)->text(), table_->item(row, kStatus)->text() == "RUNNING"
                                                      ? table_->item(row, kStatus)->data(Qt::UserRole).toLongLong()
                                                      : 0);
  });
}

void HistoryView::refresh() {
  const std::string path = store::HistoryDb::resolve_path(db_path.toStdString());
  if (path != finished_path_) {  // run ids are per history file
    finished_.clear();
    finished_path_ = path;
  }
  const int64_t keep = current_id();
  table_->setSortingEnabled(false);
  table_->setRowCount(0);
  if (!std::filesystem::exists(path)) {
    info_->setText(tr("No history yet at %1: it is created by the first run.").arg(QString::fromStdString(path)));
    return;
  }
  bool running = false;
  try {
    store::HistoryDb db(path, store::HistoryDb::Mode::Read);
    std::optional<store::RunStatus> status;
    if (status_->currentIndex() > 0) status = store::parse_run_status(status_->currentText().toStdString());
    std::optional<std::string> tag;
    if (!tag_->text().trimmed().isEmpty()) tag = tag_->text().trimmed().toStdString();
    const QString needle = filter_->text().trimmed();
    auto runs = db.list_runs(status, tag);
    std::reverse(runs.begin(), runs.end());  // newest first
    for (const auto& r : runs) {
      const QString strategy = QString::fromStdString(r.strategy);
      const QString dir = QString::fromStdString(r.run_dir), name = QString::fromStdString(r.name);
      if (!needle.isEmpty() && !name.contains(needle, Qt::CaseInsensitive) &&
          !strategy.contains(needle, Qt::CaseInsensitive) && !dir.contains(needle, Qt::CaseInsensitive))
        continue;
      const bool live = r.status == store::RunStatus::Running;
      running = running || live;
      auto cached = finished_.find(r.id);
      const store::RunSummary sum = cached != finished_.end() ? cached->second : db.summary(r.id);
      if (!live) finished_[r.id] = sum;
      const int row = table_->rowCount();
      table_->insertRow(row);
      fill_row(row, r, sum);
    }
    info_->setText(tr("%1 run(s) shown from %2").arg(table_->rowCount()).arg(QString::fromStdString(path)));
  } catch (const std::exception& e) {
    info_->setText(tr("Cannot read the history: %1").arg(e.what()));
    emit message(tr("cannot read the history %1: %2").arg(QString::fromStdString(path), e.what()));
  }
  table_->setSortingEnabled(true);
  table_->resizeColumnsToContents();
  if (const int row = row_of(keep); row >= 0) table_->selectRow(row);
  if (running) auto_refresh_->start();
}

void HistoryView::fill_row(int row, const store::RunRecord& r, const store::RunSummary& sum) {
  const QString dir = QString::fromStdString(r.run_dir);
  const bool live = r.status == store::RunStatus::Running;
  auto* id = new QTableWidgetItem;
  id->setData(Qt::DisplayRole, static_cast<qlonglong>(r.id));
  table_->setItem(row, kId, id);
  auto* n = new QTableWidgetItem(QString::fromStdString(r.name));
  n->setData(Qt::UserRole, QString::fromStdString(r.config));
  table_->setItem(row, kName, n);
  auto* st = new QTableWidgetItem(QString::fromStdString(store::to_string(r.status)));
  st->setData(Qt::UserRole, static_cast<qlonglong>(r.launcher_pid.value_or(0)));
  if (!r.exit_reason.empty()) st->setToolTip(QString::fromStdString(r.exit_reason));
  table_->setItem(row, kStatus, st);
  const RunProgress progress = RunProgress::of(r.steps(), total_steps(r.config), sum.mean_step_ms.value_or(0));
  const QString steps =
      progress.total > 0 ? QString("%1 / %2").arg(r.steps()).arg(progress.total) : QString::number(r.steps());
  table_->setItem(row, kSteps, new NumberItem(steps, static_cast<double>(r.steps())));
  table_->setItem(row, kProgress,
                  new QTableWidgetItem(live ? progress.text(true).section(QString::fromUtf8(" · "), 1) : QString()));
  auto opt_text = [](std::optional<double> v, int digits) { return v ? QString::number(*v, 'g', digits) : QString(); };
  table_->setItem(row, kFinalLoss, new NumberItem(opt_text(sum.final_loss, 4), sum.final_loss));
  table_->setItem(row, kBestScore, new NumberItem(opt_text(sum.best_score, 4), sum.best_score));
  const std::optional<double> peak =
      sum.peak_bytes ? std::optional<double>(static_cast<double>(*sum.peak_bytes)) : std::nullopt;
  table_->setItem(row, kPeak, new NumberItem(peak ? LayoutView::bytes_text(*peak) : QString(), peak));
  table_->setItem(
      row, kStepMs,
      new NumberItem(sum.mean_step_ms ? QString::number(*sum.mean_step_ms, 'f', 1) : QString(), sum.mean_step_ms));
  std::optional<double> duration;
  if (r.start_time)
    duration = (r.end_time ? *r.end_time : static_cast<double>(QDateTime::currentSecsSinceEpoch())) - *r.start_time;
  table_->setItem(row, kDuration,
                  new NumberItem(duration ? RunProgress::duration_text(*duration) : QString(), duration));
  const QString sweep = sweep_of(dir);
  table_->setItem(row, kSweep, new QTableWidgetItem(sweep));
  table_->setItem(row, kStrategy, new QTableWidgetItem(QString::fromStdString(r.strategy)));
  table_->setItem(row, kMesh, new QTableWidgetItem(QString("%1×%2").arg(r.sp).arg(r.dp)));
  table_->setItem(row, kDevices, new QTableWidgetItem(devices_text(r.devices)));
  const QString started =
      r.start_time ? QDateTime::fromSecsSinceEpoch(static_cast<qint64>(*r.start_time)).toString("yyyy-MM-dd HH:mm:ss")
                   : "";
  table_->setItem(row, kStarted, new QTableWidgetItem(started));
  QStringList tags;
  for (const auto& t : r.tags) tags << QString::fromStdString(t);
  table_->setItem(row, kTags, new QTableWidgetItem(tags.join(", ")));
  table_->setItem(row, kDir, new QTableWidgetItem(dir));
  if (sweep.isEmpty()) return;
  // A sweep's runs share a tint (two tints alternate between sweeps).
  const QColor tint = (qHash(sweep) % 2) ? QColor(232, 240, 252) : QColor(234, 247, 236);
  for (int c = 0; c < kColumns; ++c)
    if (auto* item = table_->item(row, c)) item->setBackground(tint);
}

int HistoryView::row_of(int64_t run_id) const {
  for (int row = 0; row < table_->rowCount(); ++row)
    if (table_->item(row, kId)->data(Qt::DisplayRole).toLongLong() == run_id) return row;
  return -1;
}

QStringList HistoryView::sweep_run_dirs(const QString& sweep) const {
  std::map<qlonglong, QString> by_id;  // in the order they ran
  for (int row = 0; row < table_->rowCount(); ++row)
    if (table_->item(row, kSweep)->text() == sweep)
      by_id[table_->item(row, kId)->data(Qt::DisplayRole).toLongLong()] = table_->item(row, kDir)->text();
  QStringList out;
  for (const auto& [id, dir] : by_id) out << dir;
  return out;
}

QStringList HistoryView::selected_run_dirs() const {
  QStringList out;
  for (const auto& range : table_->selectedRanges())
    for (int row = range.topRow(); row <= range.bottomRow(); ++row) out << table_->item(row, kDir)->text();
  if (out.isEmpty() && table_->currentRow() >= 0) out << table_->item(table_->currentRow(), kDir)->text();
  return out;
}

int64_t HistoryView::current_id() const {
  const int row = table_->currentRow();
  return row < 0 ? 0 : table_->item(row, kId)->data(Qt::DisplayRole).toLongLong();
}

void HistoryView::show_notes() {
  const int64_t id = current_id();
  if (id <= 0) return notes_->clear();
  try {
    store::HistoryDb db(store::HistoryDb::resolve_path(db_path.toStdString()), store::HistoryDb::Mode::Read);
    QString text;
    if (auto r = db.run(id); r && !r->exit_reason.empty())
      text += tr("Stopped: %1\n\n").arg(QString::fromStdString(r->exit_reason));
    for (const auto& n : db.notes(id))
      text += QDateTime::fromSecsSinceEpoch(static_cast<qint64>(n.time)).toString("yyyy-MM-dd HH:mm  ") +
              QString::fromStdString(n.text) + "\n";
    notes_->setPlainText(text.isEmpty() ? tr("(no notes)") : text);
  } catch (const std::exception& e) {
    notes_->setPlainText(tr("cannot read notes: %1").arg(e.what()));
  }
}

void HistoryView::run_cli(const QStringList& args) {
  auto* p = new QProcess(this);
  QStringList full = args;
  if (!db_path.isEmpty()) full << "--db" << db_path;
  p->setProcessChannelMode(QProcess::MergedChannels);
  connect(p, &QProcess::finished, this, [this, p](int code, QProcess::ExitStatus) {
    const QString out = QString::fromUtf8(p->readAll()).trimmed();
    if (code != 0) emit message(out.isEmpty() ? tr("halo runs failed (exit %1)").arg(code) : out);
    p->deleteLater();
    refresh();
    emit cliFinished(code);
  });
  connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    emit message(tr("cannot run %1: %2").arg(RunController::halo_binary(), p->errorString()));
    p->deleteLater();
    emit cliFinished(-1);
  });
  p->start(RunController::halo_binary(), full);
}

}  // namespace halo::gui
