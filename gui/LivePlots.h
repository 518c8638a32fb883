// The live view of a run: one small panel per loss key, lr, step time split, throughput and
// per-rank memory, x zoom linked across panels, values on hover, other runs overlaid.
#pragma once

#include <QWidget>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QGridLayout;
class QLabel;
class QProgressBar;
class QSlider;
class QStackedWidget;
class QTabWidget;
class QTimer;

namespace halo::gui {

class PlotPanel;
class RunModel;

class LivePlots : public QWidget {
  Q_OBJECT
 public:
  enum class Axis { Step, RelativeTime, WallTime };

  explicit LivePlots(QWidget* parent = nullptr);
  ~LivePlots() override;

  // The run in full view (not owned; nullptr clears) and runs drawn over it on every panel.
  void set_run(const RunModel* run);
  void set_overlays(std::vector<const RunModel*> runs);
  const std::vector<const RunModel*>& overlays() const { return overlays_; }
  bool keep_overlays() const;   // the user asked to keep overlays when a new run starts
  void set_live(bool running);  // the run is going: "starting ranks…" until its first step
  void set_sweep(int current, int total, const QString& name);  // total 0 hides the sweep bar
  void set_axis(Axis a);
  void set_smoothing(double weight);  // [0, 1)
  double smoothing() const { return smoothing_; }
  void set_log_y(bool log);  // the loss panels
  void reset_zoom();         // every panel back to the whole run
  bool zoomed() const { return zoom_.has_value(); }
  // A run's history id from its folder (unset or nullopt: labelled by name only).
  std::function<std::optional<int64_t>(const QString& run_dir)> run_id;
  QString run_label(const RunModel& run) const;  // "#12 tiny" (id and name)

  // Rebuilds every curve from the models and replots now.
  void refresh();
  // Number of points a plot holds of a series (tests check the plots hold the run's steps).
  size_t loss_points(const std::string& key) const;
  QCustomPlot* loss_plot() const;  // the panel of "loss" (or the first loss panel)
  PlotPanel* loss_panel(const std::string& key) const;
  std::vector<std::string> loss_keys() const;  // panels' keys, total first
  QCustomPlot* memory_plot() const;
  PlotPanel* memory_panel() const { return memory_; }
  PlotPanel* time_panel() const { return time_; }
  PlotPanel* lr_panel() const { return lr_; }
  std::vector<PlotPanel*> panels() const;
  bool showing_placeholder() const;  // "starting ranks…" / "no run" instead of the panels
  QString placeholder_text() const;
  QString summary_text() const;
  QTabWidget* logs() const { return logs_; }
  QProgressBar* sweep_bar() const { return sweep_bar_; }

 public slots:
  void schedule_refresh();  // coalesces bursts of events into one refresh per 100 ms
  void clear_overlays();

 signals:
  void overlaysCleared();

 private:
  PlotPanel* make_panel(const QString& title, const QString& y_label);
  void sync_loss_panels(const std::vector<std::string>& keys);
  void lay_out_panels();
  void link(PlotPanel* p);
  void apply_x_range();
  void add_run_curves(const RunModel& run, bool main);
  void add_memory_curves(const RunModel& run, bool main);
  void add_memory_levels(const RunModel& run);
  std::vector<double> x_of(const RunModel& run, int rank) const;
  void update_header();
  void update_logs();

  const RunModel* run_ = nullptr;
  std::vector<const RunModel*> overlays_;
  Axis axis_ = Axis::Step;
  double smoothing_ = 0.6;
  bool live_ = false, log_y_ = false, syncing_ = false;
  std::optional<std::pair<double, double>> zoom_;
  std::map<std::string, PlotPanel*> loss_panels_;
  PlotPanel *lr_, *time_, *throughput_, *memory_;
  QGridLayout* grid_;
  QStackedWidget* stack_;
  QLabel* placeholder_;
  QComboBox* axis_box_;
  QSlider* smooth_slider_;
  QLabel* smooth_label_;
  QCheckBox *log_box_, *keep_box_;
  QLabel* summary_;
  QProgressBar* sweep_bar_;
  QTabWidget* logs_;
  QTimer* timer_;
  std::map<std::string, size_t> loss_points_;
};

}  // namespace halo::gui
