// One table row per layer of the whole model (striped, the gather, replicated), one column per
// rank; halo shares at or over kHaloWarning are flagged; the totals sum each rank's bytes.
#include "LayoutView.h"

#include <QBrush>
#include <QColor>
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "ShardOverlay.h"

namespace halo::gui {

namespace {

QString part_text(protocol::LayoutPart part) {
  switch (part) {
    case protocol::LayoutPart::Sharded:
      return QObject::tr("striped");
    case protocol::LayoutPart::Gather:
      return QObject::tr("gather");
    case protocol::LayoutPart::Replicated:
      return QObject::tr("replicated");
  }
  return {};
}

QTableWidgetItem* item(const QString& text) { return new QTableWidgetItem(text); }

}  // namespace

LayoutView::LayoutView(QWidget* parent) : QWidget(parent) {
  overlay_ = new ShardOverlay(this);
  table_ = new QTableWidget(this);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->setVisible(false);
  totals_ = new QLabel(this);
  totals_->setWordWrap(true);
  totals_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(overlay_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
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

QString LayoutView::cell_text(const protocol::LayoutRank& r, double exchange_ms) {
  QStringList dims;
  for (const int64_t d : r.shape) dims << QString::number(d);
  QString text = QString("(%1)  halo %2|%3  %4")
                     .arg(dims.join(", "))
                     .arg(r.halo_left)
                     .arg(r.halo_right)
                     .arg(bytes_text(static_cast<double>(r.activation_bytes)));
  if (r.received_bytes > 0) text += QObject::tr("  receives %1").arg(bytes_text(static_cast<double>(r.received_bytes)));
  if (exchange_ms >= 0) text += QObject::tr("  waits %1 ms").arg(exchange_ms, 0, 'f', 2);
  return text;
}

double LayoutView::halo_share(const protocol::LayoutLayer& layer) {
  if (layer.part != protocol::LayoutPart::Sharded) return 0;
  double share = 0;
  for (const protocol::LayoutRank& r : layer.ranks) {
    const int64_t own = r.in_columns[1] - r.in_columns[0];
    if (own > 0) share = std::max(share, static_cast<double>(r.halo_left + r.halo_right) / static_cast<double>(own));
  }
  return share;
}

void LayoutView::fill_row(int row, const protocol::LayoutLayer& l, int sp) {
  table_->setItem(row, kName, item(QString::fromStdString(l.name)));
  table_->setItem(row, kPart, item(part_text(l.part)));
  table_->setItem(row, kWindow,
                  item(l.part == protocol::LayoutPart::Sharded
                           ? QString("%1 / %2 / %3 / %4").arg(l.kernel).arg(l.stride).arg(l.padding).arg(l.dilation)
                           : QString("-")));
  const double share = halo_share(l);
  QTableWidgetItem* s =
      item(l.part == protocol::LayoutPart::Sharded ? QString("%1 %").arg(100 * share, 0, 'f', 0) : QString("-"));
  if (share >= kHaloWarning) {
    s->setBackground(QColor(255, 196, 120));
    s->setToolTip(tr("the halo is %1 % of the stripe: each rank borrows that much of what it computes from; fewer "
                     "ranks (parallel.sp) or a wider image exchange less")
                      .arg(100 * share, 0, 'f', 0));
  }
  table_->setItem(row, kHaloShare, s);
  double slowest = -1;
  for (const protocol::LayoutRank& r : l.ranks) {
    if (r.rank < 0 || r.rank >= sp) continue;
    double ms = -1;
    if (const auto rank = exchange_ms_.find(r.rank); rank != exchange_ms_.end())
      if (const auto it = rank->second.find(l.name); it != rank->second.end()) ms = it->second;
    slowest = std::max(slowest, ms);
    table_->setItem(row, kFirstRank + r.rank, item(cell_text(r, ms)));
  }
  table_->setItem(row, kExchange, item(slowest >= 0 ? QString("%1").arg(slowest, 0, 'f', 2) : QString("-")));
}

bool LayoutView::set_exchange(const std::map<int, std::map<std::string, double>>& ms) {
  exchange_ms_ = ms;
  if (!layout_) return false;
  const int sp = std::max(layout_->sp, 0);
  for (size_t i = 0; i < layout_->layers.size(); ++i) fill_row(static_cast<int>(i), layout_->layers[i], sp);
  table_->resizeColumnsToContents();
  return static_cast<int>(ms.size()) >= sp;
}

QImage LayoutView::compose_view(const QString& run_dir, int view, int sp) {
  std::vector<QImage> stripes;
  int width = 0, height = 0;
  for (int r = 0; r < sp; ++r) {
    QImage s(QDir(run_dir).filePath(QString::fromStdString(protocol::preview_file(view, r))));
    if (s.isNull()) return {};
    width += s.width();
    height = std::max(height, s.height());
    stripes.push_back(std::move(s));
  }
  if (stripes.empty()) return {};
  QImage whole(width, height, QImage::Format_RGB32);
  whole.fill(Qt::black);
  QPainter p(&whole);
  int x = 0;
  for (const QImage& s : stripes) {
    p.drawImage(x, 0, s);
    x += s.width();
  }
  return whole;
}

bool LayoutView::load_previews(const QString& run_dir) {
  if (!layout_) return false;
  std::vector<QImage> images;
  bool all = true;
  for (int v = 0; v < views_; ++v) {
    images.push_back(compose_view(run_dir, v, layout_->sp));
    all &= !images.back().isNull();
  }
  overlay_->set_images(std::move(images));
  return all;
}

void LayoutView::set_layout(const std::optional<protocol::LayoutEvent>& layout, int views, const QString& run) {
  layout_ = layout;
  views_ = std::max(1, views);
  exchange_ms_.clear();
  overlay_->set_layout(layout, views, run);
  overlay_->set_images({});
  table_->clear();
  if (!layout) {
    table_->setRowCount(0);
    table_->setColumnCount(0);
    totals_->setText(tr("No layout: open a run (its workers report the layout when they start)."));
    return;
  }
  const std::vector<protocol::LayoutLayer>& layers = layout->layers;
  const int sp = std::max(layout->sp, 0);
  QStringList headers{tr("layer"), tr("runs"), tr("k / s / p / d"), tr("halo / stripe"), tr("exchange ms / step")};
  for (int r = 0; r < sp; ++r) headers << tr("rank %1: shape, halo L|R, output, received").arg(r);
  table_->setColumnCount(static_cast<int>(headers.size()));
  table_->setHorizontalHeaderLabels(headers);
  table_->setRowCount(static_cast<int>(layers.size()));
  std::vector<double> outputs(static_cast<size_t>(sp), 0.0), received(static_cast<size_t>(sp), 0.0);
  QStringList flagged;
  for (size_t i = 0; i < layers.size(); ++i) {
    fill_row(static_cast<int>(i), layers[i], sp);
    if (halo_share(layers[i]) >= kHaloWarning) flagged << QString::fromStdString(layers[i].name);
    for (const protocol::LayoutRank& r : layers[i].ranks) {
      if (r.rank < 0 || r.rank >= sp) continue;
      outputs[static_cast<size_t>(r.rank)] += static_cast<double>(r.activation_bytes);
      received[static_cast<size_t>(r.rank)] += static_cast<double>(r.received_bytes);
    }
  }
  table_->resizeColumnsToContents();
  QStringList out_parts, in_parts;
  for (int r = 0; r < sp; ++r) {
    out_parts << tr("rank %1: %2").arg(r).arg(bytes_text(outputs[static_cast<size_t>(r)]));
    in_parts << tr("rank %1: %2").arg(r).arg(bytes_text(received[static_cast<size_t>(r)]));
  }
  QString text = tr("Layer outputs summed per rank (input of %1 images): %2.  Received per forward (halos and the "
                    "gather): %3.")
                     .arg(layout->input[0])
                     .arg(out_parts.join(";  "))
                     .arg(in_parts.join(";  "));
  if (!flagged.isEmpty())
    text += tr("  Halo at or over %1 % of the stripe: %2.").arg(100 * kHaloWarning, 0, 'f', 0).arg(flagged.join(", "));
  totals_->setText(text);
  // Start on the first layer that trades halos: that is what the overlay is for.
  int first_halo = 0;
  for (size_t i = 0; i < layers.size() && first_halo == 0; ++i)
    for (const protocol::LayoutRank& r : layers[i].ranks)
      if (r.halo_left + r.halo_right > 0 && layers[i].part == protocol::LayoutPart::Sharded)
        first_halo = static_cast<int>(i);
  if (!layers.empty()) table_->selectRow(first_halo);
}

}  // namespace halo::gui
