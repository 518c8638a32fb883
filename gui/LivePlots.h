// The live view of a run: losses (each key, TensorBoard smoothing), lr, step time split,
// throughput, per-rank memory with the device limit, rank logs; other runs overlaid.
#pragma once

#include <QWidget>

#include <map>
#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QCustomPlot;
class QLabel;
class QSlider;
class QTabWidget;
class QTimer;

namespace halo::gui {

class EnvelopeGraph;
class RunModel;

class LivePlots : public QWidget {
  Q_OBJECT
 public:
  enum class Axis { Step, RelativeTime, WallTime };

  explicit LivePlots(QWidget* parent = nullptr);
  ~LivePlots() override;

  // The run in full view (not owned; nullptr clears) and runs drawn over it (total loss, lr).
  void set_run(const RunModel* run);
  void set_overlays(std::vector<const RunModel*> runs);
  void set_axis(Axis a);
  void set_smoothing(double weight);  // [0, 1)
  double smoothing() const { return smoothing_; }

  // Rebuilds every curve from the models and replots now.
  void refresh();
  // Number of points a plot holds of a series (tests check the plots hold the run's steps).
  size_t loss_points(const std::string& key) const;
  QCustomPlot* loss_plot() const { return loss_; }
  QCustomPlot* memory_plot() const { return memory_; }
  QTabWidget* logs() const { return logs_; }

 public slots:
  void schedule_refresh();  // coalesces bursts of events into one refresh per 100 ms

 private:
  struct Curve;
  QCustomPlot* make_plot(const QString& title, const QString& y_label);
  EnvelopeGraph& curve(QCustomPlot* plot, const QString& name, const QColor& color, Qt::PenStyle style = Qt::SolidLine,
                       double width = 1.0);
  std::vector<double> x_of(const RunModel& run, int rank) const;
  void finish_plot(QCustomPlot* plot, bool keep_x);
  void update_logs();

  const RunModel* run_ = nullptr;
  std::vector<const RunModel*> overlays_;
  Axis axis_ = Axis::Step;
  double smoothing_ = 0.6;
  QCustomPlot *loss_, *lr_, *time_, *throughput_, *memory_;
  std::vector<QCustomPlot*> plots_;
  std::vector<std::unique_ptr<Curve>> curves_;
  QComboBox* axis_box_;
  QSlider* smooth_slider_;
  QLabel* smooth_label_;
  QLabel* summary_;
  QTabWidget* logs_;
  QTimer* timer_;
  std::map<std::string, size_t> loss_points_;
};

}  // namespace halo::gui
