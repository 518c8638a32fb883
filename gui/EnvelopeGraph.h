// One long series on a QCustomPlot drawn as its min/max envelope per pixel column: the
// graph holds at most two points per column of the visible range, resampled on zoom/pan.
#pragma once

#include <QColor>
#include <QString>

#include <vector>

class QCPGraph;
class QCustomPlot;
class QCPAxis;

namespace halo::gui {

class EnvelopeGraph {
 public:
  EnvelopeGraph(QCustomPlot* plot, const QString& name, const QColor& color, Qt::PenStyle style = Qt::SolidLine,
                double width = 1.0);
  EnvelopeGraph(const EnvelopeGraph&) = delete;
  EnvelopeGraph& operator=(const EnvelopeGraph&) = delete;

  void set_data(std::vector<double> x, std::vector<double> y);  // x ascending
  // Refills the graph from the x axis' current range and the axis rect's width in pixels.
  void resample();
  bool empty() const { return x_.empty(); }
  size_t size() const { return x_.size(); }  // points held (before decimation)
  double x_min() const { return x_.empty() ? 0 : x_.front(); }
  double x_max() const { return x_.empty() ? 1 : x_.back(); }
  bool y_range(double& lo, double& hi) const;  // finite min/max of all points
  // Finite min/max of the points in the x range of the last resample(); min_positive: the
  // smallest value > 0 there (for a log axis). False when none was visible.
  bool visible_y_range(double& lo, double& hi, double& min_positive) const;
  // The point at or before x (the last one left of it; the first when x is before all).
  bool value_at(double x, double& px, double& py) const;
  size_t drawn_points() const { return drawn_; }
  QCPGraph* graph() const { return graph_; }

 private:
  QCustomPlot* plot_;
  QCPGraph* graph_;
  std::vector<double> x_, y_;
  size_t drawn_ = 0;
  bool visible_ = false;
  double vis_lo_ = 0, vis_hi_ = 0, vis_min_pos_ = 0;
};

}  // namespace halo::gui
