// Paints the input's camera views with each rank's stripe and, for the chosen layer, the
// halo columns it borrows from its neighbours (mapped to input pixels), with a legend.
#pragma once

#include <QImage>
#include <QRectF>
#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

#include "protocol/LayoutEvent.h"

namespace halo::gui {

class ShardOverlay : public QWidget {
  Q_OBJECT
 public:
  explicit ShardOverlay(QWidget* parent = nullptr);
  // run: the run's name for the header (may be empty).
  void set_layout(const std::optional<protocol::LayoutEvent>& layout, int views, const QString& run = {});
  // The camera images under the stripes, one per view (null images: a plain backdrop).
  void set_images(std::vector<QImage> images);
  void set_layer(int index);
  int layer() const { return layer_; }
  // Where view v is drawn: the views in the grid of rows and columns that draws them largest.
  std::vector<QRectF> view_rects() const;
  QSize sizeHint() const override { return {900, 420}; }

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  void paint_view(QPainter& p, const QRectF& view, int v) const;
  void paint_legend(QPainter& p, const QRectF& where) const;
  std::optional<protocol::LayoutEvent> layout_;
  std::vector<QImage> images_;
  QString run_;
  int views_ = 1, layer_ = 0;
};

}  // namespace halo::gui
