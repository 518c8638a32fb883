// Halo's main window: setup form, live view, layout, strategies and history as tabs; runs
// are started and stopped through the launcher process (RunController), never in here.
#pragma once

#include <QMainWindow>

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

class QTabWidget;

namespace halo::gui {

class HistoryView;
class LayoutView;
class LivePlots;
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
  // A run folder: attached live when its launcher (pid) is still going, else loaded whole.
  bool open_run(const QString& run_dir, qint64 running_pid = 0);
  void overlay_runs(const QStringList& run_dirs);
  void compare_runs(const QStringList& run_dirs);
  void export_run(const QString& run_dir);
  void show_message(const QString& text, bool error = true);

  QTabWidget* tabs() const { return tabs_; }
  SetupForm* setup() const { return setup_; }
  LivePlots* live() const { return live_; }
  LayoutView* layout_view() const { return layout_; }
  StrategyView* strategies() const { return strategies_; }
  HistoryView* history() const { return history_; }
  RunController* controller() const { return controller_; }
  const RunModel* shown_run() const;

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  void show_run(const RunModel* run);
  QTabWidget* tabs_;
  SetupForm* setup_;
  LivePlots* live_;
  LayoutView* layout_;
  StrategyView* strategies_;
  HistoryView* history_;
  RunController* controller_;
  std::unique_ptr<RunModel> opened_;
  std::vector<std::unique_ptr<RunModel>> overlays_;
  bool layout_shown_ = false;
};

}  // namespace halo::gui
