// The experiment setup form: one widget per field of config's field list (new settings get
// a row without gui edits), validated as the user types with the CLI's own messages.
#pragma once

#include <QWidget>

#include <functional>
#include <map>

#include <nlohmann/json.hpp>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGridLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace halo::config {
struct FieldInfo;
}

namespace halo::gui {

class SetupForm : public QWidget {
  Q_OBJECT
 public:
  explicit SetupForm(QWidget* parent = nullptr);

  // experiments/ of the source tree or install ($HALO_EXPERIMENTS first).
  static QString experiments_dir();
  // Fills every widget; `source` names where it came from (a file, a run) for the title.
  void set_experiment(const nlohmann::json& experiment, const QString& source = QString());
  nlohmann::json experiment() const;    // the widgets as an experiment file
  bool load_file(const QString& path);  // false + message on error
  bool save_file(const QString& path);
  bool valid() const { return valid_; }
  QString source() const { return source_; }
  // Every problem at once, one per line: the CLI's "  - field: value: fix" lines, then what
  // the launcher would refuse ("" when valid).
  QString problems_text() const;
  int problem_count() const { return problem_count_; }
  QString predicted_text() const;  // what the form shows as the predicted memory per rank
  // Predicted memory per rank for an experiment (CoreChecks' text by default).
  std::function<QString(const nlohmann::json&)> predict;

  // Widgets by config path (tests type into them); nullptr when the field has another kind.
  QLineEdit* line(const QString& path) const;
  QSpinBox* spin(const QString& path) const;
  QComboBox* combo(const QString& path) const;
  QCheckBox* check(const QString& path) const;
  bool row_visible(const QString& path) const;  // false for the other task's fields

 signals:
  void validityChanged(bool valid);
  void experimentChanged();  // after each validation (the planner follows the form)
  void sourceChanged(const QString& source);
  void launchRequested(const nlohmann::json& experiment);
  void message(const QString& text);  // errors for the status bar / a dialog

 public slots:
  void validate();

 private:
  void build();
  QWidget* field_widget(const config::FieldInfo& f);
  QFormLayout* section_form(const std::string& section, QGridLayout* grid);
  void fill_presets();
  void show_task_fields();
  void browse(const QString& path);  // a folder (data.root) or a file (model.pretrained) chooser

  nlohmann::json base_;  // the loaded file: fields the form has no widget for survive
  std::map<QString, QWidget*> fields_;
  struct Row {
    QFormLayout* form;  // the form the field's row is in
    QWidget* widget;    // the row's field: the field itself, or the box holding it and its button
  };
  std::map<QString, Row> rows_;
  std::map<std::string, QFormLayout*> forms_;
  std::map<std::string, QGroupBox*> groups_;
  QComboBox* presets_ = nullptr;
  std::map<QString, QPushButton*> browse_;  // the "Browse…" button of each path field
  QPushButton* launch_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* devices_ = nullptr;
  QLabel* predicted_ = nullptr;
  QPlainTextEdit* problems_ = nullptr;
  QString source_;
  int problem_count_ = 0;
  bool valid_ = false, filling_ = false;
};

}  // namespace halo::gui
