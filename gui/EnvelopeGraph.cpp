// Each column becomes one or two points ordered so the line leaves the column at its last
// value; QCustomPlot's own adaptive sampling is off so the envelope is ours alone.
#include "EnvelopeGraph.h"

#include <algorithm>
#include <cmath>

#include <qcustomplot.h>

#include "EnvelopeSampler.h"

namespace halo::gui {

EnvelopeGraph::EnvelopeGraph(QCustomPlot* plot, const QString& name, const QColor& color, Qt::PenStyle style,
                             double width)
    : plot_(plot), graph_(plot->addGraph()) {
  graph_->setName(name);
  QPen pen(color, width, style);
  graph_->setPen(pen);
  graph_->setAdaptiveSampling(false);
}

void EnvelopeGraph::set_data(std::vector<double> x, std::vector<double> y) {
  const size_t n = std::min(x.size(), y.size());
  x.resize(n);
  y.resize(n);
  x_ = std::move(x);
  y_ = std::move(y);
}

bool EnvelopeGraph::y_range(double& lo, double& hi) const {
  bool any = false;
  for (double v : y_)
    if (std::isfinite(v)) {
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  return any;
}

bool EnvelopeGraph::visible_y_range(double& lo, double& hi, double& min_positive) const {
  if (!visible_) return false;
  lo = vis_lo_, hi = vis_hi_, min_positive = vis_min_pos_;
  return true;
}

bool EnvelopeGraph::value_at(double x, double& px, double& py) const {
  if (x_.empty()) return false;
  auto it = std::upper_bound(x_.begin(), x_.end(), x);
  size_t i = it == x_.begin() ? 0 : static_cast<size_t>(it - x_.begin()) - 1;
  while (i > 0 && !std::isfinite(y_[i])) --i;  // a NaN step shows the last finite value
  if (!std::isfinite(y_[i])) return false;
  px = x_[i], py = y_[i];
  return true;
}

void EnvelopeGraph::resample() {
  const QCPRange r = graph_->keyAxis()->range();
  const int columns = std::max(1, graph_->keyAxis()->axisRect()->width());
  const auto cols = EnvelopeSampler::sample(x_, y_, r.lower, r.upper, columns);
  visible_ = false;
  vis_min_pos_ = 0;
  QVector<double> keys, values;
  keys.reserve(static_cast<qsizetype>(cols.size() * 2));
  values.reserve(static_cast<qsizetype>(cols.size() * 2));
  for (const auto& c : cols) {
    vis_lo_ = visible_ ? std::min(vis_lo_, c.lo) : c.lo;
    vis_hi_ = visible_ ? std::max(vis_hi_, c.hi) : c.hi;
    visible_ = true;
    const double pos = c.lo > 0 ? c.lo : c.hi > 0 ? c.hi : 0;  // a column's lo <= 0 may still hold positives
    if (pos > 0 && (vis_min_pos_ == 0 || pos < vis_min_pos_)) vis_min_pos_ = pos;
    if (c.lo == c.hi) {
      keys << c.x;
      values << c.lo;
      continue;
    }
    const bool end_high = c.hi - c.last < c.last - c.lo;  // leave the column near its last value
    keys << c.x << c.x;
    values << (end_high ? c.lo : c.hi) << (end_high ? c.hi : c.lo);
  }
  drawn_ = static_cast<size_t>(keys.size());
  graph_->setData(keys, values, /*alreadySorted=*/true);
}

}  // namespace halo::gui
