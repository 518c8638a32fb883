// The memory tab: per rank a stacked bar of weights / gradients / optimizer state / saved
// activations / transient, predicted beside measured with errors over 10 % flagged, and the
// live bytes through one step as the planner walks it beside the ranks' measured timeline.
#pragma once

#include <QWidget>

#include <string>
#include <vector>

#include "MemoryBreakdown.h"

class QCustomPlot;
class QLabel;
class QTableWidget;
class QTimer;

namespace halo::gui {

class RunModel;

class MemoryView : public QWidget {
  Q_OBJECT
 public:
  explicit MemoryView(QWidget* parent = nullptr);
  void set_run(const RunModel* run);  // not owned; nullptr clears
  void refresh();
  void schedule_refresh();

  QCustomPlot* breakdown_plot() const { return bars_; }
  QCustomPlot* timeline_plot() const { return timeline_; }
  QTableWidget* table() const { return table_; }
  // Per rank, what the bars show.
  const std::vector<MemoryBreakdown>& predicted() const { return predicted_; }
  const std::vector<MemoryBreakdown>& measured() const { return measured_; }
  QStringList flagged() const;         // "rank 1 peak: +12.0 %" for every error over 10 %
  QString peak_text() const;           // the timeline's predicted peak mark
  QString measured_peak_text() const;  // its measured peak mark ("" before a timeline arrived)
  // Curves on the timeline whose name contains `containing` ("predicted", "measured"; all: "").
  int timeline_curves(const QString& containing = {}) const;

 private:
  void draw_bars();
  void fill_table();
  void draw_timeline();
  struct Peak {  // the highest point offered
    double x = 0, y = -1;
    QString where;
    int rank = 0;
    void offer(double at_x, double at_y, const std::string& at_where, int at_rank);
  };
  QString mark_peak(const Peak& peak, const QString& what, const QColor& color, bool below);
  const RunModel* run_ = nullptr;
  std::vector<MemoryBreakdown> predicted_, measured_;
  QCustomPlot *bars_, *timeline_;
  QTableWidget* table_;
  QLabel* info_;
  QString peak_text_, measured_peak_text_;
  QTimer* timer_;
};

}  // namespace halo::gui
