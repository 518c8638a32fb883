// Paints the input's camera views with each rank's stripe and, for the chosen layer, the
// halo columns it borrows from its neighbours (mapped to input pixels).
#pragma once

#include <QWidget>

#include <optional>

#include "protocol/LayoutEvent.h"

namespace halo::gui {

class ShardOverlay : public QWidget {
  Q_OBJECT
 public:
  explicit ShardOverlay(QWidget* parent = nullptr);
  void set_layout(const std::optional<protocol::LayoutEvent>& layout, int views);
  void set_layer(int index);
  int layer() const { return layer_; }
  QSize sizeHint() const override { return {900, 220}; }

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  std::optional<protocol::LayoutEvent> layout_;
  int views_ = 1, layer_ = 0;
};

}  // namespace halo::gui
