// The planner tab: every setup of the form's experiment on 1..N devices (memory::plan_setups)
// with its predicted peak per rank against a budget slider, the recommended row marked, and
// "use / launch this row"; it plans for devices this machine does not have (cuda on a CPU box).
#pragma once

#include <QWidget>

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/StrategyPlanner.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QTableWidget;
class QTimer;

namespace halo::gui {

class PlannerView : public QWidget {
  Q_OBJECT
 public:
  explicit PlannerView(QWidget* parent = nullptr);

  void set_experiment(const nlohmann::json& experiment);  // re-plans (coalesced)
  void set_devices(const QString& counts);                // "1,2,4,8"
  void set_device_kind(const QString& kind);              // "cpu" / "cuda": what to plan for
  void set_budget_bytes(int64_t bytes);                   // moves the slider
  int64_t budget_bytes() const;
  void replan();  // now

  const std::optional<memory::PlanResult>& plan() const { return plan_; }
  QTableWidget* table() const { return table_; }
  QSlider* budget_slider() const { return budget_; }
  QString problem_text() const;  // why there is no plan ("" when there is one)
  // The experiment as table row `row` sets it up (the form's settings, that row's parallel ones).
  std::optional<nlohmann::json> row_experiment(int row) const;
  void select_row(int row);

 signals:
  // "Use this row" (launch false) fills the setup form; "Launch this row" also starts it.
  void useRow(const nlohmann::json& experiment, bool launch);

 private:
  void fill_table();
  void draw_bars();
  void emit_row(bool launch);
  nlohmann::json experiment_;
  std::optional<memory::PlanResult> plan_;
  std::vector<size_t> shown_;  // table row -> plan row
  QComboBox* kind_;
  QLineEdit* devices_;
  QSlider* budget_;
  QLabel *budget_label_, *summary_;
  QCustomPlot* bars_;
  QTableWidget* table_;
  QPushButton *use_, *launch_;
  QTimer* timer_;
  bool budget_set_ = false;   // the user moved the slider: keep it when the experiment changes
  int64_t budget_bytes_ = 0;  // exact: the slider's steps would round `halo plan`'s 80 GiB
};

}  // namespace halo::gui
