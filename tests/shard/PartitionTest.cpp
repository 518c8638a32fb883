// Pure sharding maths: partitions, window reach, output ownership, halo plans and the
// pre-launch shardability check, against brute force and PyTorch's output-size formula.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

#include "shard/HaloPlan.h"
#include "shard/Partition.h"
#include "shard/ShardingCheck.h"
#include "util/Error.h"

namespace halo::shard {
namespace {

TEST(Partition, EvenSplitsAndRejectsUneven) {
  Partition p = even_partition(12, 3);
  EXPECT_EQ(p.span(0), (Span{0, 4}));
  EXPECT_EQ(p.span(2), (Span{8, 12}));
  EXPECT_TRUE(p.is_even());
  EXPECT_EQ(even_partition(7, 1).span(0), (Span{0, 7}));
  EXPECT_THROW(even_partition(10, 3), util::Error);
}

TEST(Partition, OutputWidthMatchesPyTorchFormula) {
  for (int64_t W = 1; W < 40; ++W)
    for (int64_t k : {1, 2, 3, 4, 5, 7})
      for (int64_t s : {1, 2, 4})
        for (int64_t d : {1, 2})
          for (int64_t p = 0; p <= 3; ++p) {
            const int64_t expect = (W + 2 * p - d * (k - 1) - 1) >= 0 ? (W + 2 * p - d * (k - 1) - 1) / s + 1 : 0;
            EXPECT_EQ(output_width(W, {k, s, p, d}), expect) << W << " " << k << " " << s << " " << p << " " << d;
          }
}

TEST(Partition, InputNeededIsTheWindowsUnion) {
  const Window w{5, 2, 2, 2};
  const Span need = input_needed({3, 6}, w);
  // Output o reads o*s - p + j*d for j in [0, k).
  EXPECT_EQ(need.begin, 3 * 2 - 2);
  EXPECT_EQ(need.end, 5 * 2 - 2 + 4 * 2 + 1);
}

TEST(Partition, OutputPartitionCoversEveryOutputOnce) {
  for (int parts : {1, 2, 3, 4})
    for (int64_t each : {1, 2, 3, 5, 8})
      for (int64_t k : {1, 2, 3, 7})
        for (int64_t s : {1, 2, 4})
          for (int64_t p : {0, 1, 3}) {
            const Window w{k, s, p, 1};
            const Partition in = even_partition(parts * each, parts);
            const int64_t out_w = output_width(in.global_width(), w);
            if (out_w <= 0) continue;
            const Partition out = output_partition(in, w);
            EXPECT_EQ(out.global_width(), out_w);
            EXPECT_EQ(out.span(0).begin, 0);
            EXPECT_EQ(out.spans().back().end, out_w);
          }
}

TEST(HaloPlan, SendsMatchReceivesAndPiecesTileTheNeed) {
  for (int parts : {1, 2, 3, 4})
    for (int64_t each : {1, 2, 4, 6})
      for (int64_t k : {1, 3, 4, 7})
        for (int64_t d : {1, 2})
          for (int64_t s : {1, 2}) {
            const Window w{k, s, (k - 1) * d / 2, d};
            const Partition in = even_partition(parts * each, parts);
            const Partition out = output_partition(in, w);
            bool empty = false;
            for (const Span& sp : out.spans()) empty |= sp.empty();
            if (empty) {
              EXPECT_THROW(make_halo_plan(in, w, 0, "t"), util::Error);
              continue;
            }
            std::vector<HaloPlan> plans;
            for (int r = 0; r < parts; ++r) plans.push_back(make_halo_plan(in, w, r, "t"));
            std::map<std::pair<int, int>, Span> sent, received;
            for (const HaloPlan& pl : plans) {
              int64_t at = pl.needed.begin;
              for (const Piece& pc : pl.pieces) {
                EXPECT_EQ(pc.columns.begin, at);
                at = pc.columns.end;
                if (pc.source == Piece::Source::Peer) received[{pc.peer, pl.rank}] = pc.columns;
                if (pc.source == Piece::Source::Pad) {
                  EXPECT_TRUE(pc.columns.end <= 0 || pc.columns.begin >= in.global_width());
                }
              }
              EXPECT_EQ(at, pl.needed.end);
              for (const Transfer& t : pl.sends) sent[{pl.rank, t.peer}] = t.columns;
            }
            EXPECT_EQ(sent, received);
          }
}

TEST(HaloPlan, HaloWiderThanNeighbourReachesRanksBeyond) {
  // 4 ranks of 1 column, kernel 7: rank 0 needs columns 1..3 from ranks 1, 2 and 3.
  const Partition in = even_partition(4, 4);
  const HaloPlan plan = make_halo_plan(in, Window{7, 1, 3, 1}, 0, "t");
  int peers = 0;
  for (const Piece& p : plan.pieces) peers += p.source == Piece::Source::Peer;
  EXPECT_EQ(peers, 3);
  EXPECT_EQ(plan.halo_left(), 3);
  EXPECT_EQ(plan.halo_right(), 3);
  // Rank 0's left halo is global padding; its right halo comes from peers.
  EXPECT_EQ(plan.peer_columns(), (std::pair<int64_t, int64_t>{0, 3}));
  EXPECT_EQ(make_halo_plan(in, Window{7, 1, 3, 1}, 2, "t").peer_columns(), (std::pair<int64_t, int64_t>{2, 1}));
}

TEST(HaloPlan, PlainPaddingOnlyWhereNothingIsExchanged) {
  struct Case {
    int64_t width;
    int parts;
    Window w;
    std::vector<std::optional<int64_t>> want;  // per rank
  };
  const std::vector<Case> cases{
      {56, 1, Window{7, 1, 3, 1}, {3}},                           // world size 1, conv_dw: conv2d's own padding
      {56, 2, Window{7, 1, 3, 1}, {std::nullopt, std::nullopt}},  // a halo to trade on both ranks
      {64, 2, Window{4, 4, 0, 1}, {0, 0}},                        // patchify: stripes line up
      {64, 2, Window{2, 2, 0, 1}, {0, 0}},                        // downsample
      {16, 2, Window{4, 2, 1, 1}, {std::nullopt, std::nullopt}},  // overlapping windows
      {56, 1, Window{3, 2, 1, 1}, {1}},                           // strided, padded, world size 1
  };
  for (const Case& c : cases) {
    const Partition in = even_partition(c.width, c.parts);
    for (int r = 0; r < c.parts; ++r) {
      const HaloPlan plan = make_halo_plan(in, c.w, r, "t");
      EXPECT_EQ(plain_padding(plan, c.w), c.want[static_cast<size_t>(r)])
          << "width " << c.width << " parts " << c.parts << " kernel " << c.w.kernel << " rank " << r;
      if (!plain_padding(plan, c.w)) continue;
      // What conv2d with that padding computes is exactly the plan's outputs.
      const int64_t pad = *plain_padding(plan, c.w);
      EXPECT_EQ(output_width(plan.owned.size() + 2 * pad - 2 * c.w.padding, c.w), plan.outputs.size());
    }
  }
}

TEST(ShardingCheck, NamesLayerAndNearestWidths) {
  const std::vector<LayerWindow> layers{{"stem.0", {4, 4, 0, 1}}, {"down.1", {2, 2, 0, 1}}};
  EXPECT_TRUE(is_shardable(layers, 64, 2));
  EXPECT_FALSE(is_shardable(layers, 60, 2));  // stripes of 30 are not divisible by 4
  try {
    check_shardable(layers, 60, 2);
    FAIL() << "expected an error";
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.what()).find("stem.0"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("48"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("64"), std::string::npos) << e.hint();
  }
  EXPECT_EQ(nearest_shardable(layers, 60, 2), (std::pair<int64_t, int64_t>{48, 64}));
}

}  // namespace
}  // namespace halo::shard
