// Memory strategies side by side: runs of one experiment under none / checkpoint / tp-N /
// tp-N+checkpoint / the same with ZeRO's gradients stage (run here as a sweep, or picked from
// the history), peak memory per rank and step time as bars, predicted next to measured.
#pragma once

#include <QWidget>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace halo::gui {

class RunController;
class RunModel;

class StrategyView : public QWidget {
  Q_OBJECT
 public:
  explicit StrategyView(QWidget* parent = nullptr);
  ~StrategyView() override;

  // The six variants of an experiment (N = its sp when > 1, else 2): none, checkpoint, tpN,
  // tpN+checkpoint, tpN+checkpoint with parallel.shard_state gradients, and with weights.
  static std::vector<nlohmann::json> variants(const nlohmann::json& experiment);
  void set_runs(std::vector<std::unique_ptr<RunModel>> runs);
  void add_run(std::unique_ptr<RunModel> run);
  const std::vector<std::unique_ptr<RunModel>>& runs() const { return runs_; }
  // Runs the variants one after another through the launcher, in one folder
  // <runs_root>/sweep-<name>-<time>/ (History groups the runs by it).
  void start_sweep(const nlohmann::json& experiment, const QString& runs_root, const QString& db_path);
  void stop_sweep();
  bool sweeping() const;
  RunController* sweep_controller() const { return sweep_; }
  int sweep_index() const { return sweep_index_; }  // the run going now, 0-based
  int sweep_total() const { return sweep_total_; }
  QString sweep_dir() const { return sweep_dir_; }
  void set_can_start(bool can);  // the window disables the sweep while a run is going
  QProgressBar* progress() const { return progress_; }
  void redraw();

  // Predictions for a config (bytes per rank, ms per step); unset: not shown.
  std::function<std::optional<double>(const nlohmann::json&)> predict_bytes, predict_ms;
  QTableWidget* table() const { return table_; }

 signals:
  void sweepRequested();  // the window answers with start_sweep(the form's experiment)
  void sweepRunStarted(int index, int total, const QString& name);  // sweep_controller() follows it
  void sweepFinished();
  void message(const QString& text);

 private:
  void next_in_sweep();
  std::vector<std::unique_ptr<RunModel>> runs_;
  std::deque<nlohmann::json> queue_;
  QString runs_root_, sweep_dir_;
  int sweep_index_ = -1, sweep_total_ = 0;
  bool stopped_ = false;
  QProgressBar* progress_;
  RunController* sweep_;
  QCustomPlot *memory_, *time_;
  QTableWidget* table_;
  QLabel* info_;
  QPushButton *run_, *stop_;
};

}  // namespace halo::gui
