// One small plot of the live view: envelope curves, the legend below the data (click an
// entry to hide its curve), values on hover, a y axis that follows the visible x range
// (linear or log), and marked levels (a device limit, a prediction) shown even off-scale.
#pragma once

#include <qcustomplot.h>

#include <memory>
#include <set>
#include <vector>

namespace halo::gui {

class EnvelopeGraph;

class PlotPanel : public QCustomPlot {
  Q_OBJECT
 public:
  PlotPanel(const QString& title, const QString& y_label, QWidget* parent = nullptr);
  ~PlotPanel() override;

  EnvelopeGraph& add_curve(const QString& name, const QColor& color, Qt::PenStyle style = Qt::SolidLine,
                           double width = 1.0, bool in_legend = true, bool hidden_by_default = false);
  // A horizontal marked line at y (data units); drawn as a label at the top edge when it is
  // more than `stretch` times above the data, so it never flattens the curves.
  void add_level(double y, const QString& label, const QColor& color, double stretch = 1.6);
  void clear_curves();  // curves, levels and hover items; hidden curve names are kept
  const std::vector<std::unique_ptr<EnvelopeGraph>>& curves() const { return curves_; }

  void set_log_y(bool log);
  bool log_y() const { return log_y_; }
  // Full x extent of the curves (false when empty).
  bool data_x_range(double& lo, double& hi) const;
  // Resamples every curve for the current x range and fits y to what is visible (and the
  // levels within reach), then queues a replot.
  void fit_y();

  // Hiding a curve by its legend name (what a legend click does); kept across refreshes.
  void set_curve_hidden(const QString& name, bool hidden);
  bool curve_hidden(const QString& name) const { return hidden_.count(name) > 0; }
  // The values of every shown curve at x (the last point at or before it), as shown on hover.
  QString values_at(double x) const;
  void show_cursor(double x);  // a vertical line and the values box at x
  void hide_cursor();
  QString hover_text() const { return hover_text_; }
  QStringList off_scale_labels() const { return off_scale_; }  // levels drawn as edge labels

 signals:
  void hovered(double x);  // the mouse is over the data at x (the live view links the cursor)
  void left();

 protected:
  void mouseMoveEvent(QMouseEvent* e) override;
  void leaveEvent(QEvent* e) override;

 private:
  struct Level {
    double y;
    QString label;
    QColor color;
    double stretch;
  };
  void draw_levels();
  QCPTextElement* title_;
  std::vector<std::unique_ptr<EnvelopeGraph>> curves_;
  std::vector<Level> levels_;
  std::vector<QCPAbstractItem*> level_items_;
  std::set<QString> hidden_, touched_;  // touched: the user chose (a default no longer applies)
  QStringList off_scale_;
  QCPItemStraightLine* cursor_ = nullptr;
  QCPItemText* cursor_text_ = nullptr;
  QString hover_text_;
  bool log_y_ = false;
};

}  // namespace halo::gui
