// Views are laid side by side at their aspect ratio; a layer's columns map to input pixels
// by input width / that layer's input width.
#include "ShardOverlay.h"

#include "SeriesColor.h"

#include <QPainter>

#include <algorithm>
#include <iterator>

namespace halo::gui {

ShardOverlay::ShardOverlay(QWidget* parent) : QWidget(parent) { setMinimumHeight(160); }

void ShardOverlay::set_layout(const std::optional<protocol::LayoutEvent>& layout, int views) {
  layout_ = layout;
  views_ = std::max(1, views);
  layer_ = 0;
  update();
}

void ShardOverlay::set_layer(int index) {
  layer_ = index;
  update();
}

void ShardOverlay::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  if (!layout_ || layout_->layers.empty() || layout_->input[2] <= 0 || layout_->input[3] <= 0) {
    p.drawText(rect(), Qt::AlignCenter, tr("No layout yet: it arrives with the run's first events."));
    return;
  }
  const double H = static_cast<double>(layout_->input[2]), W = static_cast<double>(layout_->input[3]);
  const auto& layers = layout_->layers;
  const protocol::LayoutLayer& layer =
      layers[static_cast<size_t>(std::clamp<int>(layer_, 0, static_cast<int>(layers.size()) - 1))];
  const protocol::LayoutLayer& first = layers[0];
  const int gap = 8, top = 22;
  const double view_w = (width() - gap * (views_ + 1)) / static_cast<double>(views_);
  const double scale = std::min(view_w / W, (height() - top - 24) / H);
  const double vw = W * scale, vh = H * scale;
  // The layer's input width: where its last rank's input columns end.
  const double layer_w = layer.ranks.empty() ? W : static_cast<double>(layer.ranks.back().in_columns[1]);
  const double to_input = W / std::max(1.0, layer_w);
  p.setRenderHint(QPainter::Antialiasing, false);
  p.drawText(QRectF(gap, 2, width() - 2 * gap, top - 4), Qt::AlignLeft | Qt::AlignVCenter,
             tr("%1 view(s) of %2x%3, sp=%4: each rank's stripe; hatched: the halo columns layer %5 (k=%6, s=%7) "
                "receives from its neighbours, in input pixels (pick a layer in the table)")
                 .arg(views_)
                 .arg(static_cast<int>(H))
                 .arg(static_cast<int>(W))
                 .arg(layout_->sp)
                 .arg(QString::fromStdString(layer.name))
                 .arg(layer.kernel)
                 .arg(layer.stride));
  for (int v = 0; v < views_; ++v) {
    const double x0 = gap + v * (vw + gap);
    const QRectF view(x0, top, vw, vh);
    QLinearGradient g(view.topLeft(), view.bottomRight());
    g.setColorAt(0, QColor(90, 110, 130));
    g.setColorAt(1, QColor(40, 50, 60));
    p.fillRect(view, g);
    for (const protocol::LayoutRank& r : first.ranks) {  // each rank's stripe of the input
      const int rank = r.rank;
      const double b = static_cast<double>(r.in_columns[0]), e = static_cast<double>(r.in_columns[1]);
      QColor c = series_color(rank);
      c.setAlpha(70);
      p.fillRect(QRectF(x0 + b * scale, top, (e - b) * scale, vh), c);
      p.setPen(QPen(series_color(rank), 1));
      p.drawLine(QPointF(x0 + e * scale, top), QPointF(x0 + e * scale, top + vh));
      p.setPen(Qt::white);
      p.drawText(QRectF(x0 + b * scale, top + 2, (e - b) * scale, 14), Qt::AlignCenter, QString("r%1").arg(rank));
    }
    for (const protocol::LayoutRank& r : layer.ranks) {  // the chosen layer's halo columns, hatched
      const int rank = r.rank;
      const double b = static_cast<double>(r.in_columns[0]) * to_input;
      const double e = static_cast<double>(r.in_columns[1]) * to_input;
      const double hl = static_cast<double>(r.halo_left) * to_input, hr = static_cast<double>(r.halo_right) * to_input;
      QBrush hatch(Qt::white, Qt::BDiagPattern);
      const double band = vh / 6, y = top + vh - band * (1 + rank % 4);
      for (const QRectF& h : {QRectF(x0 + (b - hl) * scale, y, hl > 0 ? std::max(2.0, hl * scale) : 0, band),
                              QRectF(x0 + e * scale, y, hr > 0 ? std::max(2.0, hr * scale) : 0, band)}) {
        if (h.width() <= 0) continue;
        p.fillRect(h, series_color(rank));  // the columns this rank receives from a neighbour
        p.fillRect(h, hatch);
      }
      p.setPen(QPen(series_color(rank), 2));
      p.drawLine(QPointF(x0 + b * scale, y + band / 2), QPointF(x0 + e * scale, y + band / 2));
    }
    p.setPen(palette().text().color());
    p.drawText(QRectF(x0, top + vh + 2, vw, 18), Qt::AlignCenter, tr("view %1").arg(v));
  }
}

}  // namespace halo::gui
