// One table row per layer (k/s/p/d, then one column per rank); the totals line sums each
// rank's activation bytes so the user sees where the memory went.
#include "LayoutView.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "ShardOverlay.h"

namespace halo::gui {

LayoutView::LayoutView(QWidget* parent) : QWidget(parent) {
  overlay_ = new ShardOverlay(this);
  table_ = new QTableWidget(this);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->setVisible(false);
  totals_ = new QLabel(this);
  totals_->setWordWrap(true);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(overlay_);
  split->addWidget(table_);
  split->setStretchFactor(1, 2);
  auto* v = new QVBoxLayout(this);
  v->addWidget(split, 1);
  v->addWidget(totals_);
  connect(table_, &QTableWidget::currentCellChanged, this, [this](int row, int, int, int) {
    if (row >= 0) overlay_->set_layer(row);
  });
  set_layout(std::nullopt, 1);
}

QString LayoutView::bytes_text(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  return QString("%1 %2").arg(b, 0, 'f', u == 0 ? 0 : 1).arg(units[u]);
}

QString LayoutView::cell_text(const protocol::LayoutRank& r) {
  QStringList dims;
  for (const int64_t d : r.shape) dims << QString::number(d);
  return QString("(%1)  halo %2|%3  %4")
      .arg(dims.join(", "))
      .arg(r.halo_left)
      .arg(r.halo_right)
      .arg(bytes_text(static_cast<double>(r.activation_bytes)));
}

void LayoutView::set_layout(const std::optional<protocol::LayoutEvent>& layout, int views) {
  overlay_->set_layout(layout, views);
  table_->clear();
  if (!layout) {
    table_->setRowCount(0);
    table_->setColumnCount(0);
    totals_->setText(tr("No layout: open a run (its workers report the layout when they start)."));
    return;
  }
  const std::vector<protocol::LayoutLayer>& layers = layout->layers;
  const int sp = layout->sp;
  QStringList headers{tr("layer"), tr("k / s / p / d")};
  for (int r = 0; r < sp; ++r) headers << tr("rank %1: shape, halo L|R, activations").arg(r);
  table_->setColumnCount(static_cast<int>(headers.size()));
  table_->setHorizontalHeaderLabels(headers);
  table_->setRowCount(static_cast<int>(layers.size()));
  std::vector<double> totals(static_cast<size_t>(std::max(sp, 0)), 0.0);
  int row = 0;
  for (const protocol::LayoutLayer& l : layers) {
    table_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(l.name)));
    table_->setItem(
        row, 1,
        new QTableWidgetItem(QString("%1 / %2 / %3 / %4").arg(l.kernel).arg(l.stride).arg(l.padding).arg(l.dilation)));
    for (const protocol::LayoutRank& r : l.ranks) {
      if (r.rank < 0 || r.rank >= sp) continue;
      table_->setItem(row, 2 + r.rank, new QTableWidgetItem(cell_text(r)));
      totals[static_cast<size_t>(r.rank)] += static_cast<double>(r.activation_bytes);
    }
    ++row;
  }
  table_->resizeColumnsToContents();
  QStringList parts;
  for (int r = 0; r < sp; ++r) parts << tr("rank %1: %2").arg(r).arg(bytes_text(totals[static_cast<size_t>(r)]));
  totals_->setText(
      tr("Layer outputs summed per rank (input of %1 images): %2").arg(layout->input[0]).arg(parts.join(";  ")));
  // Start on the first layer that trades halos: that is what the overlay is for.
  int first_halo = 0;
  for (size_t i = 0; i < layers.size() && first_halo == 0; ++i)
    for (const protocol::LayoutRank& r : layers[i].ranks)
      if (r.halo_left + r.halo_right > 0) first_halo = static_cast<int>(i);
  if (!layers.empty()) table_->selectRow(first_halo);
}

}  // namespace halo::gui
