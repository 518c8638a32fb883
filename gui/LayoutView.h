// The sharded activation layout of a run: camera views with rank stripes and halos, and a
// table of every layer's shape, halo widths and activation bytes on each rank.
#pragma once

#include <QWidget>

#include <optional>

#include "protocol/LayoutEvent.h"

class QLabel;
class QTableWidget;

namespace halo::gui {

class ShardOverlay;

class LayoutView : public QWidget {
  Q_OBJECT
 public:
  explicit LayoutView(QWidget* parent = nullptr);
  // The run's layout event (none yet: an empty table); views from the run's config (data.views).
  void set_layout(const std::optional<protocol::LayoutEvent>& layout, int views);
  QTableWidget* table() const { return table_; }
  ShardOverlay* overlay() const { return overlay_; }
  // Cell text of a rank's column: "(N, C, H, W)  halo L|R  <bytes>".
  static QString cell_text(const protocol::LayoutRank& rank);
  static QString bytes_text(double bytes);

 private:
  ShardOverlay* overlay_;
  QTableWidget* table_;
  QLabel* totals_;
};

}  // namespace halo::gui
