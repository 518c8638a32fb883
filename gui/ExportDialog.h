// Export a run's checkpoint as plain tensors by running `halo export` as a process; shows
// where the file and its manifest went, or the CLI's error.
#pragma once

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProcess;
class QPushButton;

namespace halo::gui {

class ExportDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ExportDialog(const QString& run_dir, QWidget* parent = nullptr);
  QString db_path;
  QComboBox* checkpoints() const { return checkpoints_; }
  QComboBox* format() const { return format_; }
  QLineEdit* output() const { return output_; }
  QCheckBox* replace() const { return replace_; }  // --force: replace an existing output file
  QString result_text() const;
  void start_export();

 signals:
  void exported(bool ok, const QString& output_path);

 private:
  void suggest_output();
  QString run_dir_;
  QComboBox* checkpoints_;
  QComboBox* format_;
  QLineEdit* output_;
  QCheckBox* replace_;
  QPushButton* export_;
  QPlainTextEdit* result_;
  QProcess* process_ = nullptr;
};

}  // namespace halo::gui
