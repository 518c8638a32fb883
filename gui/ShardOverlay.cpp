// Views are laid in the grid that draws them largest, at their aspect ratio; a layer's
// columns map to input pixels by input width / that layer's input width.
#include "ShardOverlay.h"

#include "SeriesColor.h"

#include <QFontMetrics>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace halo::gui {

namespace {

constexpr int kGap = 8, kTop = 22, kLegend = 22, kCaption = 16;

}  // namespace

ShardOverlay::ShardOverlay(QWidget* parent) : QWidget(parent) { setMinimumHeight(220); }

void ShardOverlay::set_layout(const std::optional<protocol::LayoutEvent>& layout, int views, const QString& run) {
  layout_ = layout;
  views_ = std::max(1, views);
  run_ = run;
  layer_ = 0;
  update();
}

void ShardOverlay::set_images(std::vector<QImage> images) {
  images_ = std::move(images);
  update();
}

void ShardOverlay::set_layer(int index) {
  layer_ = index;
  update();
}

std::vector<QRectF> ShardOverlay::view_rects() const {
  if (!layout_ || layout_->input[2] <= 0 || layout_->input[3] <= 0) return {};
  const double H = static_cast<double>(layout_->input[2]), W = static_cast<double>(layout_->input[3]);
  const double avail_w = width() - kGap, avail_h = height() - kTop - kLegend;
  int best_cols = 1;
  double best = 0;
  for (int cols = 1; cols <= views_; ++cols) {
    const int rows = (views_ + cols - 1) / cols;
    const double s = std::min((avail_w / cols - kGap) / W, (avail_h / rows - kCaption - kGap) / H);
    if (s > best) best = s, best_cols = cols;
  }
  std::vector<QRectF> out;
  for (int v = 0; v < views_; ++v) {
    const int row = v / best_cols, col = v % best_cols;
    out.emplace_back(kGap + col * (W * best + kGap), kTop + row * (H * best + kCaption + kGap), W * best, H * best);
  }
  return out;
}

void ShardOverlay::paint_view(QPainter& p, const QRectF& view, int v) const {
  const double W = static_cast<double>(layout_->input[3]), scale = view.width() / W;
  const auto& layers = layout_->layers;
  const protocol::LayoutLayer& layer =
      layers[static_cast<size_t>(std::clamp<int>(layer_, 0, static_cast<int>(layers.size()) - 1))];
  const QImage* image = v < static_cast<int>(images_.size()) && !images_[static_cast<size_t>(v)].isNull()
                            ? &images_[static_cast<size_t>(v)]
                            : nullptr;
  if (image) {
    p.drawImage(view, *image);
  } else {
    QLinearGradient g(view.topLeft(), view.bottomRight());
    g.setColorAt(0, QColor(90, 110, 130));
    g.setColorAt(1, QColor(40, 50, 60));
    p.fillRect(view, g);
  }
  const double top = view.top(), vh = view.height(), x0 = view.left();
  for (const protocol::LayoutRank& r : layers[0].ranks) {  // each rank's stripe of the input
    const double b = static_cast<double>(r.in_columns[0]), e = static_cast<double>(r.in_columns[1]);
    QColor c = series_color(r.rank);
    c.setAlpha(image ? 45 : 70);
    p.fillRect(QRectF(x0 + b * scale, top, (e - b) * scale, vh), c);
    p.setPen(QPen(series_color(r.rank), 2));
    p.drawLine(QPointF(x0 + e * scale, top), QPointF(x0 + e * scale, top + vh));
    p.setPen(Qt::white);
    p.drawText(QRectF(x0 + b * scale, top + 2, (e - b) * scale, 14), Qt::AlignCenter, QString("rank %1").arg(r.rank));
  }
  if (layer.part == protocol::LayoutPart::Sharded) {
    // The layer's input width: where its last rank's input columns end.
    const double layer_w = layer.ranks.empty() ? W : static_cast<double>(layer.ranks.back().in_columns[1]);
    const double to_input = W / std::max(1.0, layer_w);
    const QBrush hatch(Qt::white, Qt::BDiagPattern);
    for (const protocol::LayoutRank& r : layer.ranks) {  // the chosen layer's halo columns, hatched
      const double b = static_cast<double>(r.in_columns[0]) * to_input;
      const double e = static_cast<double>(r.in_columns[1]) * to_input;
      const double hl = static_cast<double>(r.halo_left) * to_input, hr = static_cast<double>(r.halo_right) * to_input;
      const double band = vh / 6, y = top + vh - band * (1 + r.rank % 4);
      for (const QRectF& h : {QRectF(x0 + (b - hl) * scale, y, hl > 0 ? std::max(2.0, hl * scale) : 0, band),
                              QRectF(x0 + e * scale, y, hr > 0 ? std::max(2.0, hr * scale) : 0, band)}) {
        if (h.width() <= 0) continue;
        p.fillRect(h, series_color(r.rank));  // the columns this rank receives from a neighbour
        p.fillRect(h, hatch);
      }
      p.setPen(QPen(series_color(r.rank), 2));
      p.drawLine(QPointF(x0 + b * scale, y + band / 2), QPointF(x0 + e * scale, y + band / 2));
    }
  } else {
    p.fillRect(view, QColor(255, 255, 255, 60));
    p.setPen(Qt::white);
    p.drawText(view, Qt::AlignCenter,
               layer.part == protocol::LayoutPart::Gather ? tr("gathered: every rank receives\nthe others' columns")
                                                          : tr("replicated: computed whole\non every rank"));
  }
  p.setPen(palette().text().color());
  p.drawText(QRectF(x0, top + vh + 1, view.width(), kCaption), Qt::AlignCenter, tr("view %1").arg(v));
}

void ShardOverlay::paint_legend(QPainter& p, const QRectF& where) const {
  double x = where.left();
  const double y = where.top() + 4, box = 12;
  auto entry = [&](const QBrush& fill, const QBrush& over, const QString& text) {
    p.fillRect(QRectF(x, y, box, box), fill);
    if (over.style() != Qt::NoBrush) p.fillRect(QRectF(x, y, box, box), over);
    x += box + 4;
    const double w = p.fontMetrics().horizontalAdvance(text) + 14;
    p.setPen(palette().text().color());
    p.drawText(QRectF(x, y - 2, w, box + 4), Qt::AlignLeft | Qt::AlignVCenter, text);
    x += w;
  };
  for (int r = 0; r < layout_->sp; ++r) {
    QColor c = series_color(r);
    c.setAlpha(120);
    entry(c, Qt::NoBrush, tr("rank %1's stripe").arg(r));
  }
  entry(QColor(120, 120, 120), QBrush(Qt::white, Qt::BDiagPattern),
        tr("halo: columns the chosen layer receives from a neighbour (one band per rank)"));
}

void ShardOverlay::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  const std::vector<QRectF> views = view_rects();
  if (!layout_ || layout_->layers.empty() || views.empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("No layout yet: it arrives with the run's first events."));
    return;
  }
  const auto& layers = layout_->layers;
  const protocol::LayoutLayer& layer =
      layers[static_cast<size_t>(std::clamp<int>(layer_, 0, static_cast<int>(layers.size()) - 1))];
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setPen(palette().text().color());
  p.drawText(QRectF(kGap, 2, width() - 2 * kGap, kTop - 4), Qt::AlignLeft | Qt::AlignVCenter,
             tr("%1%2 view(s) of %3x%4, sp=%5; layer %6 (k=%7, s=%8): pick a layer in the table")
                 .arg(run_.isEmpty() ? QString() : run_ + ": ")
                 .arg(views_)
                 .arg(layout_->input[2])
                 .arg(layout_->input[3])
                 .arg(layout_->sp)
                 .arg(QString::fromStdString(layer.name))
                 .arg(layer.kernel)
                 .arg(layer.stride));
  for (int v = 0; v < views_; ++v) paint_view(p, views[static_cast<size_t>(v)], v);
  paint_legend(p, QRectF(kGap, height() - kLegend, width() - 2 * kGap, kLegend));
}

}  // namespace halo::gui
