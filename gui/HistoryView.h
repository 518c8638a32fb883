// The runs table from the history file (read-only): filters, tags and notes (written by
// `halo runs tag|note`), overlay, re-open, strategy comparison, clone, export.
#pragma once

#include <QWidget>

#include <nlohmann/json.hpp>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTableWidget;

namespace halo::gui {

class HistoryView : public QWidget {
  Q_OBJECT
 public:
  explicit HistoryView(QWidget* parent = nullptr);
  QString db_path;  // empty: $HALO_DB or the default history file

  void refresh();
  QTableWidget* table() const { return table_; }
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
  QLineEdit* filter_;
  QComboBox* status_;
  QLineEdit* tag_;
  QTableWidget* table_;
  QPlainTextEdit* notes_;
  QLabel* info_;
};

}  // namespace halo::gui
