// Title on top, axis rect, legend in its own row below (never over the data). The y fit
// reads the envelope columns of the last resample, so it costs O(pixels) per curve.
#include "PlotPanel.h"

#include <algorithm>
#include <cmath>

#include "EnvelopeGraph.h"

namespace halo::gui {

PlotPanel::PlotPanel(const QString& title, const QString& y_label, QWidget* parent) : QCustomPlot(parent) {
  setMinimumSize(260, 170);
  setMouseTracking(true);
  plotLayout()->insertRow(0);
  title_ = new QCPTextElement(this, title, QFont(font().family(), 9, QFont::Bold));
  plotLayout()->addElement(0, 0, title_);
  yAxis->setLabel(y_label);
  QFont small = font();
  small.setPointSize(8);
  xAxis->setTickLabelFont(small);
  yAxis->setTickLabelFont(small);
  xAxis->setLabelFont(small);
  yAxis->setLabelFont(small);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  axisRect()->setRangeDrag(Qt::Horizontal);
  axisRect()->setRangeZoom(Qt::Horizontal);
  auto* below = new QCPLayoutGrid;
  plotLayout()->addElement(2, 0, below);
  below->setMargins(QMargins(4, 0, 4, 2));
  below->addElement(0, 0, legend);
  plotLayout()->setRowStretchFactor(2, 0.001);
  legend->setVisible(true);
  legend->setFont(small);
  legend->setFillOrder(QCPLegend::foColumnsFirst);
  legend->setWrap(3);
  legend->setBorderPen(Qt::NoPen);
  legend->setBrush(Qt::NoBrush);
  legend->setRowSpacing(0);
  legend->setColumnSpacing(8);
  setNoAntialiasingOnDrag(true);
  setPlottingHint(QCP::phFastPolylines, true);  // 1-px solid lines drawn segment by segment
  connect(this, &QCustomPlot::legendClick, this, [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
    if (auto* pi = qobject_cast<QCPPlottableLegendItem*>(item))
      set_curve_hidden(pi->plottable()->name(), pi->plottable()->visible());
  });
}

PlotPanel::~PlotPanel() = default;

EnvelopeGraph& PlotPanel::add_curve(const QString& name, const QColor& color, Qt::PenStyle style, double width,
                                    bool in_legend, bool hidden_by_default) {
  if (hidden_by_default && !touched_.count(name)) hidden_.insert(name);
  curves_.push_back(std::make_unique<EnvelopeGraph>(this, name, color, style, width));
  QCPGraph* g = curves_.back()->graph();
  if (!in_legend) g->removeFromLegend();
  if (hidden_.count(name)) {
    g->setVisible(false);
    if (auto* item = legend->itemWithPlottable(g)) item->setTextColor(Qt::gray);
  }
  return *curves_.back();
}

void PlotPanel::add_level(double y, const QString& label, const QColor& color, double stretch) {
  if (std::isfinite(y) && y > 0) levels_.push_back({y, label, color, stretch});
}

void PlotPanel::clear_curves() {
  clearGraphs();
  curves_.clear();
  clearItems();
  level_items_.clear();
  levels_.clear();
  off_scale_.clear();
  cursor_ = nullptr;
  cursor_text_ = nullptr;
}

void PlotPanel::set_log_y(bool log) {
  log_y_ = log;
  yAxis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (log)
    yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  else
    yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
  fit_y();
}

bool PlotPanel::data_x_range(double& lo, double& hi) const {
  bool any = false;
  for (const auto& c : curves_) {
    if (c->empty()) continue;
    lo = any ? std::min(lo, c->x_min()) : c->x_min();
    hi = any ? std::max(hi, c->x_max()) : c->x_max();
    any = true;
  }
  return any;
}

void PlotPanel::fit_y() {
  double lo = 0, hi = 0, min_pos = 0;
  bool any = false;
  for (const auto& c : curves_) {
    c->resample();
    double l, h, mp;
    if (!c->graph()->visible() || !c->visible_y_range(l, h, mp)) continue;
    lo = any ? std::min(lo, l) : l;
    hi = any ? std::max(hi, h) : h;
    if (mp > 0) min_pos = min_pos > 0 ? std::min(min_pos, mp) : mp;
    any = true;
  }
  const double data_hi = hi;
  for (const Level& l : levels_)  // levels near the data join the range; far ones become labels
    if (!any || l.y <= std::max(data_hi, 0.0) * l.stretch) {
      lo = any ? std::min(lo, l.y) : l.y;
      hi = any ? std::max(hi, l.y) : l.y;
      if (l.y > 0) min_pos = min_pos > 0 ? std::min(min_pos, l.y) : l.y;
      any = true;
    }
  if (any && log_y_ && min_pos > 0) {
    yAxis->setRange(min_pos / 1.25, std::max(hi, min_pos) * 1.25);
  } else if (any) {
    const double pad = hi > lo ? (hi - lo) * 0.06 : std::max(1e-9, std::fabs(hi) * 0.05);
    yAxis->setRange(lo - pad, hi + pad);
  }
  draw_levels();
  replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::draw_levels() {
  for (QCPAbstractItem* it : level_items_) removeItem(it);
  level_items_.clear();
  off_scale_.clear();
  const QCPRange r = yAxis->range();
  int stacked = 0;
  for (const Level& l : levels_) {
    auto* text = new QCPItemText(this);
    text->setColor(l.color);
    QFont f = font();
    f.setPointSize(8);
    text->setFont(f);
    text->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    level_items_.push_back(text);
    if (l.y <= r.upper) {
      auto* line = new QCPItemStraightLine(this);
      line->setPen(QPen(l.color, 1.3, Qt::DashDotLine));
      line->point1->setCoords(0, l.y);
      line->point2->setCoords(1, l.y);
      level_items_.push_back(line);
      text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
      text->position->setTypeY(QCPItemPosition::ptPlotCoords);
      text->position->setCoords(0.01, l.y);
      text->setText(l.label);
      continue;
    }
    text->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(0.99, 0.02 + 0.09 * stacked++);
    text->setText(QString::fromUtf8("▲ ") + l.label + tr(" (off scale)"));
    off_scale_ << l.label;
  }
}

void PlotPanel::set_curve_hidden(const QString& name, bool hidden) {
  touched_.insert(name);
  if (hidden)
    hidden_.insert(name);
  else
    hidden_.erase(name);
  for (const auto& c : curves_) {
    if (c->graph()->name() != name) continue;
    c->graph()->setVisible(!hidden);
    if (auto* item = legend->itemWithPlottable(c->graph())) item->setTextColor(hidden ? Qt::gray : Qt::black);
  }
  fit_y();
}

QString PlotPanel::values_at(double x) const {
  QStringList lines;
  double shown_x = x;
  bool any = false;
  for (const auto& c : curves_) {
    double px, py;
    if (!c->graph()->visible() || !c->value_at(x, px, py)) continue;
    if (!any) shown_x = px, any = true;
    lines << QString("%1: %2").arg(c->graph()->name()).arg(py, 0, 'g', 5);
  }
  if (!any) return {};
  const QString where = xAxis->label().isEmpty() ? QString::number(shown_x, 'g', 6)
                                                 : QString("%1 %2").arg(xAxis->label()).arg(shown_x, 0, 'g', 6);
  return where + "\n" + lines.join('\n');
}

void PlotPanel::show_cursor(double x) {
  hover_text_ = values_at(x);
  if (!cursor_) {
    cursor_ = new QCPItemStraightLine(this);
    cursor_->setPen(QPen(QColor(90, 90, 90), 1, Qt::DotLine));
    cursor_->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
    cursor_->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
    cursor_text_ = new QCPItemText(this);
    cursor_text_->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    cursor_text_->position->setType(QCPItemPosition::ptAxisRectRatio);
    cursor_text_->setTextAlignment(Qt::AlignLeft);
    cursor_text_->setBrush(QColor(255, 255, 255, 225));
    cursor_text_->setPen(QPen(QColor(160, 160, 160)));
    cursor_text_->setPadding(QMargins(4, 2, 4, 2));
    QFont f = font();
    f.setPointSize(8);
    cursor_text_->setFont(f);
  }
  cursor_->setVisible(true);
  cursor_->point1->setCoords(x, 0);
  cursor_->point2->setCoords(x, 1);
  const QCPRange r = xAxis->range();
  const bool right_half = r.size() > 0 && (x - r.lower) / r.size() > 0.5;  // the box goes where the cursor is not
  cursor_text_->setPositionAlignment((right_half ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignTop);
  cursor_text_->position->setCoords(right_half ? 0.01 : 0.99, 0.02);
  cursor_text_->setText(hover_text_);
  cursor_text_->setVisible(!hover_text_.isEmpty());
  replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::hide_cursor() {
  hover_text_.clear();
  if (!cursor_) return;
  cursor_->setVisible(false);
  cursor_text_->setVisible(false);
  replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::mouseMoveEvent(QMouseEvent* e) {
  QCustomPlot::mouseMoveEvent(e);
  if (!axisRect()->rect().contains(e->pos())) return;
  const double x = xAxis->pixelToCoord(e->pos().x());
  show_cursor(x);
  emit hovered(x);
}

void PlotPanel::leaveEvent(QEvent* e) {
  QCustomPlot::leaveEvent(e);
  hide_cursor();
  emit left();
}

}  // namespace halo::gui
