// The runs table from the history file (read-only): filters, tags and notes (written by
// `halo runs tag|note`), overlay, re-open, strategy comparison, clone, export.
#pragma once

#include <QWidget>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "store/RunRecord.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTableWidget;
class QTimer;

namespace halo::gui {

class HistoryView : public QWidget {
  Q_OBJECT
 public:
  explicit HistoryView(QWidget* parent = nullptr);
  QString db_path;  // empty: $HALO_DB or the default history file

  // Columns (logical indices; the view shows the figures next to the status).
  enum Column {
    kId,
    kName,
    kStatus,
    kSteps,
    kStrategy,
    kMesh,
    kDevices,
    kStarted,
    kTags,
    kFinalLoss,
    kBestScore,
    kPeak,
    kStepMs,
    kDuration,
    kProgress,
    kSweep,
    kDir,
    kColumns
  };
  void refresh();  // keeps the current run selected; re-runs itself every 2 s while a run is RUNNING
  QTableWidget* table() const { return table_; }
  int row_of(int64_t run_id) const;  // -1 when not shown
  // A sweep's folder name ("sweep-tiny-20250101-120000") for runs started by "Run all five
  // setups"; "" for others.
  static QString sweep_of(const QString& run_dir);
  QStringList selected_run_dirs() const;
  // Runs a `halo runs ...` command (tag, note) and refreshes when it is done.
  void run_cli(const QStringList& args);

 signals:
  void openRun(const QString& run_dir, qint64 running_pid);  // pid 0 unless RUNNING
  void overlayRuns(const QStringList& run_dirs);
  void compareRuns(const QStringList& run_dirs);
  void cloneRun(const nlohmann::json& config);
  void exportRun(const QString& run_dir);
  void message(const QString& text);
  void cliFinished(int exit_code);  // after run_cli's command (and the refresh it causes)

 private:
  int64_t current_id() const;
  void show_notes();
  void fill_row(int row, const store::RunRecord& r, const store::RunSummary& s);
  QStringList sweep_run_dirs(const QString& sweep) const;
  QLineEdit* filter_;
  QComboBox* status_;
  QLineEdit* tag_;
  QTableWidget* table_;
  QPlainTextEdit* notes_;
  QLabel* info_;
  QTimer* auto_refresh_;
  std::map<int64_t, store::RunSummary> finished_;  // summaries of runs that no longer change
  std::string finished_path_;                      // the history file they are from
};

}  // namespace halo::gui
