// Halo's main window: setup form, live view, memory, layout, planner, strategies and history
// as tabs; runs are started and stopped through the launcher process (RunController), never in here.
#pragma once

#include <QMainWindow>

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "RunIndex.h"

class QAction;
class QLabel;
class QTabWidget;

namespace halo::gui {

class HistoryView;
class LayoutView;
class LivePlots;
class MemoryView;
class PlannerView;
class RunController;
class RunModel;
class SetupForm;
class StrategyView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Where new run folders go (default: runs/ under the working directory) and the history
  // file the launcher writes (default: the launcher's own choice).
  QString runs_root = "runs";
  QString db_path;
  bool interactive = true;  // false: messages go to the status bar only (tests, screenshots)

  bool load_experiment(const QString& path);
  void launch(const nlohmann::json& experiment);
  // A run folder: attached live when its launcher (pid) is still going, else loaded whole;
  // the setup form gets the run's config either way.
  bool open_run(const QString& run_dir, qint64 running_pid = 0);
  void overlay_runs(const QStringList& run_dirs);
  void compare_runs(const QStringList& run_dirs);
  void export_run(const QString& run_dir);
  void show_message(const QString& text, bool error = true);
  void stop();  // the run or the sweep that is going

  QTabWidget* tabs() const { return tabs_; }
  SetupForm* setup() const { return setup_; }
  LivePlots* live() const { return live_; }
  MemoryView* memory_view() const { return memory_; }
  LayoutView* layout_view() const { return layout_; }
  PlannerView* planner() const { return planner_; }
  StrategyView* strategies() const { return strategies_; }
  HistoryView* history() const { return history_; }
  RunController* controller() const { return controller_; }
  QAction* launch_action() const { return launch_act_; }
  QAction* stop_action() const { return stop_act_; }
  QString state_text() const;  // the status bar's "run: …"
  const RunModel* shown_run() const;

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  void wire_runs();
  void wire_views();
  void follow(RunController* c);  // Live, Memory and Layout show c's run as it goes
  void show_run(const RunModel* run);
  void update_actions();
  void update_title();
  void on_finished(RunController* c, bool ok, const QString& msg);
  QTabWidget* tabs_;
  SetupForm* setup_;
  LivePlots* live_;
  MemoryView* memory_;
  LayoutView* layout_;
  PlannerView* planner_;
  StrategyView* strategies_;
  HistoryView* history_;
  RunController* controller_;
  RunController* following_ = nullptr;
  QAction *launch_act_, *stop_act_;
  QLabel* state_;
  RunIndex ids_;
  std::unique_ptr<RunModel> opened_;
  std::vector<std::unique_ptr<RunModel>> overlays_;
  bool layout_shown_ = false, previews_shown_ = false, exchange_shown_ = false;
};

}  // namespace halo::gui
