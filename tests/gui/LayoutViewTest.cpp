// The layout tab: every layer of the whole model with where it runs, its halo share (flagged
// at 50 % of the stripe), the bytes each rank receives and its measured exchange time, and the
// camera views drawn from the ranks' stripe pictures laid side by side.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QImage>
#include <QLabel>
#include <QTableWidget>

#include "GuiTestSupport.h"
#include "LayoutView.h"
#include "ShardOverlay.h"

namespace halo::gui {
namespace {

using protocol::LayoutLayer;
using protocol::LayoutPart;

// Two ranks of 32 input columns each: a stem, a 7x7 block (halo 3 of 32), a late block whose
// 3 halo columns are 75 % of a 4-column stripe, the gather and a replicated head.
protocol::LayoutEvent layout() {
  protocol::LayoutEvent e;
  e.input = {4, 3, 64, 256};
  e.sp = 2;
  LayoutLayer stem{"stem.0", 4, 4, 0, 1, {}};
  stem.ranks = {{0, {0, 128}, {0, 32}, {4, 8, 16, 32}, 0, 0, 16384, 0},
                {1, {128, 256}, {32, 64}, {4, 8, 16, 32}, 0, 0, 16384, 0}};
  LayoutLayer early{"stages.0.blocks.0.conv_dw", 7, 1, 3, 1, {}};
  early.ranks = {{0, {0, 32}, {0, 32}, {4, 8, 16, 32}, 0, 3, 16384, 6144},
                 {1, {32, 64}, {32, 64}, {4, 8, 16, 32}, 3, 0, 16384, 6144}};
  LayoutLayer late{"stages.3.blocks.0.conv_dw", 7, 1, 3, 1, {}};
  late.ranks = {{0, {0, 4}, {0, 4}, {4, 32, 2, 4}, 0, 3, 4096, 3072},
                {1, {4, 8}, {4, 8}, {4, 32, 2, 4}, 3, 0, 4096, 3072}};
  LayoutLayer gather{"gather (img_neck -> img_view_transformer)", 1, 1, 0, 1, {}, LayoutPart::Gather};
  gather.ranks = {{0, {0, 8}, {0, 16}, {4, 16, 4, 16}, 0, 8, 16384, 8192},
                  {1, {8, 16}, {0, 16}, {4, 16, 4, 16}, 8, 0, 16384, 8192}};
  LayoutLayer head{"lc_head", 1, 1, 0, 1, {}, LayoutPart::Replicated};
  head.ranks = {{0, {0, 16}, {0, 16}, {2, 50, 16, 1}, 0, 0, 6400, 0},
                {1, {0, 16}, {0, 16}, {2, 50, 16, 1}, 0, 0, 6400, 0}};
  e.layers = {stem, early, late, gather, head};
  return e;
}

TEST(LayoutView, EveryLayerShowsWhereItRunsAndItsHaloShareFlaggedNearTheStripeWidth) {
  LayoutView v;
  v.set_layout(layout(), 2, "quickstart #3");
  QTableWidget* t = v.table();
  ASSERT_EQ(t->rowCount(), 5);
  ASSERT_EQ(t->columnCount(), LayoutView::kFirstRank + 2);
  EXPECT_EQ(t->item(0, LayoutView::kPart)->text(), "striped");
  EXPECT_EQ(t->item(3, LayoutView::kPart)->text(), "gather");
  EXPECT_EQ(t->item(4, LayoutView::kPart)->text(), "replicated");
  EXPECT_EQ(t->item(1, LayoutView::kHaloShare)->text(), "9 %");   // 3 of 32
  EXPECT_EQ(t->item(2, LayoutView::kHaloShare)->text(), "75 %");  // 3 of 4
  EXPECT_EQ(t->item(4, LayoutView::kHaloShare)->text(), "-");
  EXPECT_TRUE(t->item(1, LayoutView::kHaloShare)->toolTip().isEmpty());
  EXPECT_TRUE(t->item(2, LayoutView::kHaloShare)->toolTip().contains("75 % of the stripe"));
  EXPECT_DOUBLE_EQ(LayoutView::halo_share(layout().layers[2]), 0.75);
  EXPECT_DOUBLE_EQ(LayoutView::halo_share(layout().layers[3]), 0.0);  // a gather has no halo
  EXPECT_TRUE(t->item(1, LayoutView::kFirstRank)->text().endsWith("receives 6.0 KiB"));
  EXPECT_FALSE(t->item(0, LayoutView::kFirstRank)->text().contains("receives"));
  const QString totals = v.totals()->text();
  EXPECT_TRUE(totals.contains("Received per forward (halos and the gather): rank 0: 17.0 KiB")) << totals.toStdString();
  EXPECT_TRUE(totals.contains("Halo at or over 50 % of the stripe: stages.3.blocks.0.conv_dw."))
      << totals.toStdString();
  EXPECT_EQ(t->currentRow(), 1);                              // the first layer that trades halos
  EXPECT_EQ(t->item(1, LayoutView::kExchange)->text(), "-");  // not measured yet
  // The ranks' measured exchange times: the slowest in the column, each rank's in its cell.
  EXPECT_FALSE(v.set_exchange({{0, {{"stages.0.blocks.0.conv_dw", 0.5}}}}));  // rank 1's still missing
  EXPECT_TRUE(v.set_exchange({{0, {{"stages.0.blocks.0.conv_dw", 0.5}}}, {1, {{"stages.0.blocks.0.conv_dw", 0.75}}}}));
  EXPECT_EQ(t->item(1, LayoutView::kExchange)->text(), "0.75");
  EXPECT_TRUE(t->item(1, LayoutView::kFirstRank)->text().endsWith("receives 6.0 KiB  waits 0.50 ms"));
  EXPECT_EQ(t->item(0, LayoutView::kExchange)->text(), "-");  // the stem exchanges nothing
}

TEST(LayoutView, TheViewsAreDrawnFromTheRanksStripePictures) {
  const QString dir = testing::gui_fresh_dir("previews");
  LayoutView v;
  v.resize(1200, 700);
  v.set_layout(layout(), 2);
  EXPECT_FALSE(v.load_previews(dir));  // none written yet
  QDir(dir).mkpath("preview");
  for (int view = 0; view < 2; ++view)
    for (int rank = 0; rank < 2; ++rank) {
      QImage stripe(32, 16, QImage::Format_RGB32);
      stripe.fill(rank == 0 ? Qt::red : Qt::blue);
      ASSERT_TRUE(stripe.save(QDir(dir).filePath(QString::fromStdString(protocol::preview_file(view, rank)))));
    }
  EXPECT_TRUE(v.load_previews(dir));
  const QImage whole = LayoutView::compose_view(dir, 1, 2);
  ASSERT_EQ(whole.size(), QSize(64, 16));
  EXPECT_EQ(whole.pixelColor(5, 5), QColor(Qt::red));         // rank 0's stripe on the left
  EXPECT_EQ(whole.pixelColor(40, 5), QColor(Qt::blue));       // rank 1's on the right
  EXPECT_TRUE(LayoutView::compose_view(dir, 2, 2).isNull());  // no such view
  // The two views are drawn large: together they use most of the overlay's width or height.
  v.show();
  QApplication::processEvents();
  const auto rects = v.overlay()->view_rects();
  ASSERT_EQ(rects.size(), 2u);
  const QRectF all = rects[0].united(rects[1]);
  EXPECT_TRUE(all.width() > 0.8 * v.overlay()->width() || all.height() > 0.6 * v.overlay()->height())
      << all.width() << " x " << all.height() << " in " << v.overlay()->width() << " x " << v.overlay()->height();
}

}  // namespace
}  // namespace halo::gui
