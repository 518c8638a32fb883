// The memory tab: per rank a stacked bar of weights / gradients / optimizer state / saved
// activations / transient, predicted beside measured with errors over 10 % flagged, and the
// live bytes through one step as the planner walks it (the events carry no samples within a step).
#pragma once

#include <QWidget>

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
  QStringList flagged() const;  // "rank 1 peak: +12.0 %" for every error over 10 %
  QString peak_text() const;    // the timeline's peak mark
  int timeline_curves() const;  // curves on the timeline (the prediction, per rank)

 private:
  void draw_bars();
  void fill_table();
  void draw_timeline();
  const RunModel* run_ = nullptr;
  std::vector<MemoryBreakdown> predicted_, measured_;
  QCustomPlot *bars_, *timeline_;
  QTableWidget* table_;
  QLabel* info_;
  QString peak_text_;
  QTimer* timer_;
};

}  // namespace halo::gui
