// Views are laid side by side at their aspect ratio; a layer's columns map to input pixels
// by input width / that layer's input width.
#include "ShardOverlay.h"

#include "SeriesColor.h"

#include <QPainter>

#include <algorithm>
#include <iterator>

namespace halo::gui {

ShardOverlay::ShardOverlay(QWidget* parent) : QWidget(parent) { setMinimumHeight(160); }

void ShardOverlay::set_layout(const nlohmann::json& layout_event, int views) {
  layout_ = layout_event;
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
  if (!layout_.is_object() || !layout_.contains("input") || !layout_.contains("layers") || layout_["layers"].empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("No layout yet: it arrives with the run's first events."));
    return;
  }
  const auto& input = layout_["input"];
  const double H = input[2].get<double>(), W = input[3].get<double>();
  const auto& layers = layout_["layers"];
  const auto& layer = layers[static_cast<size_t>(std::clamp<int>(layer_, 0, static_cast<int>(layers.size()) - 1))];
  const auto& first = layers[0];
  const int gap = 8, top = 22;
  const double view_w = (width() - gap * (views_ + 1)) / static_cast<double>(views_);
  const double scale = std::min(view_w / W, (height() - top - 24) / H);
  const double vw = W * scale, vh = H * scale;
  // The layer's input width: where its last rank's input columns end.
  const double layer_w = layer["ranks"].back()["in_columns"][1].get<double>();
  const double to_input = W / std::max(1.0, layer_w);
  p.setRenderHint(QPainter::Antialiasing, false);
  p.drawText(QRectF(gap, 2, width() - 2 * gap, top - 4), Qt::AlignLeft | Qt::AlignVCenter,
             tr("%1 view(s) of %2x%3, sp=%4: each rank's stripe; hatched: the halo columns layer %5 (k=%6, s=%7) "
                "receives from its neighbours, in input pixels (pick a layer in the table)")
                 .arg(views_)
                 .arg(static_cast<int>(H))
                 .arg(static_cast<int>(W))
                 .arg(layout_.value("sp", 1))
                 .arg(QString::fromStdString(layer.value("name", "")))
                 .arg(layer.value("kernel", 0))
                 .arg(layer.value("stride", 0)));
  for (int v = 0; v < views_; ++v) {
    const double x0 = gap + v * (vw + gap);
    const QRectF view(x0, top, vw, vh);
    QLinearGradient g(view.topLeft(), view.bottomRight());
    g.setColorAt(0, QColor(90, 110, 130));
    g.setColorAt(1, QColor(40, 50, 60));
    p.fillRect(view, g);
    for (const auto& r : first["ranks"]) {  // each rank's stripe of the input
      const int rank = r.value("rank", 0);
      const double b = r["in_columns"][0].get<double>(), e = r["in_columns"][1].get<double>();
      QColor c = series_color(rank);
      c.setAlpha(70);
      p.fillRect(QRectF(x0 + b * scale, top, (e - b) * scale, vh), c);
      p.setPen(QPen(series_color(rank), 1));
      p.drawLine(QPointF(x0 + e * scale, top), QPointF(x0 + e * scale, top + vh));
      p.setPen(Qt::white);
      p.drawText(QRectF(x0 + b * scale, top + 2, (e - b) * scale, 14), Qt::AlignCenter, QString("r%1").arg(rank));
    }
    for (const auto& r : layer["ranks"]) {  // the chosen layer's halo columns, hatched
      const int rank = r.value("rank", 0);
      const double b = r["in_columns"][0].get<double>() * to_input, e = r["in_columns"][1].get<double>() * to_input;
      const double hl = r.value("halo_left", 0) * to_input, hr = r.value("halo_right", 0) * to_input;
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
