// The sharded activation layout of a run: camera views with rank stripes and halos, and a
// table of every layer's part, halo share, shape, halo widths and bytes on each rank.
#pragma once

#include <QImage>
#include <QWidget>

#include <map>
#include <optional>
#include <string>

#include "protocol/LayoutEvent.h"

class QLabel;
class QTableWidget;

namespace halo::gui {

class ShardOverlay;

class LayoutView : public QWidget {
  Q_OBJECT
 public:
  // Table columns: the layer, where it runs, its window, its halo share, then one per rank.
  static constexpr int kName = 0, kPart = 1, kWindow = 2, kHaloShare = 3, kExchange = 4, kFirstRank = 5;
  // A halo share at or above this is flagged: most of what the stripe computes from is borrowed.
  static constexpr double kHaloWarning = 0.5;

  explicit LayoutView(QWidget* parent = nullptr);
  // The run's layout event (none yet: an empty table); views from the run's config (data.views);
  // `run`: the run's name and id for the header (may be empty).
  void set_layout(const std::optional<protocol::LayoutEvent>& layout, int views, const QString& run = {});
  // The camera views under the stripes: each rank's picture of its stripe (the workers write
  // them after their first step, protocol::preview_file) laid side by side. Returns whether
  // every view was found (false: the plain backdrop, try again later).
  bool load_previews(const QString& run_dir);
  // One view's picture from its stripes in rank order; a null image when one is missing.
  static QImage compose_view(const QString& run_dir, int view, int sp);
  // The ranks' measured exchange times (RunModel::exchange_ms): per layer the slowest rank's in
  // the exchange column and each rank's in its cell. Returns whether every sharding rank's is there.
  bool set_exchange(const std::map<int, std::map<std::string, double>>& ms);
  QTableWidget* table() const { return table_; }
  ShardOverlay* overlay() const { return overlay_; }
  QLabel* totals() const { return totals_; }
  // Cell text of a rank's column: "(N, C, H, W)  halo L|R  <bytes>", then "  receives <bytes>"
  // when it receives any and "  waits <ms> ms" when its exchange time (ms >= 0) is known.
  static QString cell_text(const protocol::LayoutRank& rank, double exchange_ms = -1);
  static QString bytes_text(double bytes);
  // The largest ratio, over the ranks, of a sharded layer's halo columns to the rank's own
  // input columns, (halo_left + halo_right) / own: 0.75 when 3 columns are borrowed for
  // every 4 held; over 1 for a stripe narrower than its halo; 0 for a gather or replicated layer.
  static double halo_share(const protocol::LayoutLayer& layer);

 private:
  void fill_row(int row, const protocol::LayoutLayer& layer, int sp);
  ShardOverlay* overlay_;
  std::optional<protocol::LayoutEvent> layout_;
  std::map<int, std::map<std::string, double>> exchange_ms_;
  int views_ = 1;
  QTableWidget* table_;
  QLabel* totals_;
};

}  // namespace halo::gui
