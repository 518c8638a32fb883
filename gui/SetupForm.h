// The experiment setup form: every field of the experiment config, validated as the user
// types with the CLI's own messages, presets from experiments/, load/save, launch.
#pragma once

#include <QWidget>

#include <functional>
#include <map>

#include <nlohmann/json.hpp>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace halo::gui {

class SetupForm : public QWidget {
  Q_OBJECT
 public:
  explicit SetupForm(QWidget* parent = nullptr);

  // experiments/ of the source tree or install ($HALO_EXPERIMENTS first).
  static QString experiments_dir();
  void set_experiment(const nlohmann::json& experiment);  // fills every widget
  nlohmann::json experiment() const;                      // the widgets as an experiment file
  bool load_file(const QString& path);                    // false + message on error
  bool save_file(const QString& path);
  bool valid() const { return valid_; }
  QString problems_text() const;
  QString predicted_text() const;  // what the form shows as the predicted memory per rank  // the CLI's "  - field:
                                   // value: fix" lines ("" when valid)
  // Predicted bytes per rank for an experiment (set once a memory planner is wired in).
  std::function<QString(const nlohmann::json&)> predict;

  // Widgets by config path (tests type into them).
  QLineEdit* line(const QString& path) const;
  QSpinBox* spin(const QString& path) const;
  QComboBox* combo(const QString& path) const;

 signals:
  void validityChanged(bool valid);
  void launchRequested(const nlohmann::json& experiment);
  void message(const QString& text);  // errors for the status bar / a dialog

 public slots:
  void validate();

 private:
  void build();
  QSpinBox* add_spin(const QString& path, int lo, int hi);
  QComboBox* add_combo(const QString& path, const QStringList& items, bool editable = false);
  QLineEdit* add_line(const QString& path);
  void fill_presets();
  void update_devices();

  nlohmann::json base_;  // the loaded file: fields the form has no widget for survive
  std::map<QString, QWidget*> fields_;
  QComboBox* presets_ = nullptr;
  QCheckBox* scale_lr_ = nullptr;
  QPushButton* browse_ = nullptr;
  QPushButton* launch_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* devices_ = nullptr;
  QLabel* predicted_ = nullptr;
  QPlainTextEdit* problems_ = nullptr;
  bool valid_ = false, filling_ = false;
};

}  // namespace halo::gui
