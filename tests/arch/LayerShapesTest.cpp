// Per-rank shapes of the layer list against brute force: columns owned and computed, halo
// columns received from each side, output heights, and which widths shard at all.
#include <gtest/gtest.h>

#include <algorithm>

#include "arch/ConvNeXtLayers.h"
#include "arch/LayerShapes.h"
#include "util/Error.h"

namespace halo::arch {
namespace {

// Brute force on single columns: the rank of every column, rebuilt layer by layer.
struct Columns {
  std::vector<int> owner;  // rank owning each column
  std::vector<int64_t> of(int rank) const {
    std::vector<int64_t> out;
    for (size_t c = 0; c < owner.size(); ++c)
      if (owner[c] == rank) out.push_back(static_cast<int64_t>(c));
    return out;
  }
};

Columns even_columns(int64_t width, int sp) {
  Columns c;
  for (int64_t i = 0; i < width; ++i) c.owner.push_back(static_cast<int>(i / (width / sp)));
  return c;
}

// Output positions of a window: every o whose taps stay inside the padded input.
int64_t brute_outputs(int64_t n, const shard::Window& w) {
  int64_t count = 0;
  for (int64_t o = 0; o * w.stride - w.padding + (w.kernel - 1) * w.dilation <= n - 1 + w.padding; ++o) ++count;
  return count;
}

// Output column o is computed by the rank that holds its window's anchor column o*stride.
Columns brute_next(const Columns& in, const shard::Window& w) {
  Columns out;
  for (int64_t o = 0; o < brute_outputs(static_cast<int64_t>(in.owner.size()), w); ++o)
    out.owner.push_back(in.owner.at(static_cast<size_t>(o * w.stride)));
  return out;
}

shard::Span span_of(const std::vector<int64_t>& cols) {
  return cols.empty() ? shard::Span{} : shard::Span{cols.front(), cols.back() + 1};
}

// Columns rank r reads from lower (first) and higher (second) ranks: every tap of its outputs.
std::pair<int64_t, int64_t> brute_halo(const Columns& in, const Columns& out, const shard::Window& w, int r) {
  std::vector<int64_t> read;
  for (const int64_t o : out.of(r))
    for (int64_t t = 0; t < w.kernel; ++t) read.push_back(o * w.stride - w.padding + t * w.dilation);
  std::sort(read.begin(), read.end());
  read.erase(std::unique(read.begin(), read.end()), read.end());
  std::pair<int64_t, int64_t> halo{0, 0};
  const auto width = static_cast<int64_t>(in.owner.size());
  for (const int64_t c : read) {
    if (c < 0 || c >= width) continue;  // padding
    const int owner = in.owner[static_cast<size_t>(c)];
    if (owner < r) ++halo.first;
    if (owner > r) ++halo.second;
  }
  return halo;
}

// Shardable when every stripe entering a strided layer divides by its stride and no rank ends empty.
bool brute_shardable(const LayerList& layers, int64_t width, int sp) {
  if (width % sp != 0) return false;
  Columns cols = even_columns(width, sp);
  for (const auto& lw : layers.windows()) {
    for (int r = 0; r < sp; ++r)
      if (cols.of(r).empty() || static_cast<int64_t>(cols.of(r).size()) % lw.window.stride != 0) return false;
    cols = brute_next(cols, lw.window);
    for (int r = 0; r < sp; ++r)
      if (cols.of(r).empty()) return false;
  }
  return true;
}

using Case = std::tuple<const char*, int, int64_t, int64_t>;  // variant, sp, H, W

class Shapes : public ::testing::TestWithParam<Case> {};

TEST_P(Shapes, MatchBruteForce) {
  const auto [name, sp, height, width] = GetParam();
  const LayerList layers = convnext_layers(*find_convnext_variant(name), 10);
  const auto shapes = layer_shapes(layers, height, width, sp);
  ASSERT_EQ(shapes.size(), layers.windows().size());
  Columns cols = even_columns(width, sp);
  int64_t h = height;
  for (const LayerShape& s : shapes) {
    const Layer& l = layers[s.layer];
    ASSERT_TRUE(l.window().has_value()) << s.name;
    EXPECT_EQ(s.name, l.qualified(l.convs[*l.across_w].name));
    EXPECT_EQ(s.channels, l.out_channels) << s.name;
    EXPECT_EQ(s.in_height, h) << s.name;
    const shard::Window wh = l.convs[*l.across_w].spec.along_h();
    h = brute_outputs(h, wh);
    EXPECT_EQ(s.height, h) << s.name;
    const Columns next = brute_next(cols, s.window);
    EXPECT_EQ(s.in.global_width(), static_cast<int64_t>(cols.owner.size())) << s.name;
    EXPECT_EQ(s.out.global_width(), static_cast<int64_t>(next.owner.size())) << s.name;
    ASSERT_EQ(s.ranks.size(), static_cast<size_t>(sp));
    for (int r = 0; r < sp; ++r) {
      const RankShape& rs = s.ranks[static_cast<size_t>(r)];
      EXPECT_EQ(rs.in, span_of(cols.of(r))) << s.name << " rank " << r;
      EXPECT_EQ(rs.out, span_of(next.of(r))) << s.name << " rank " << r;
      EXPECT_EQ(s.in.span(r), rs.in);
      EXPECT_EQ(s.out.span(r), rs.out);
      const auto [left, right] = brute_halo(cols, next, s.window, r);
      EXPECT_EQ(rs.halo_left, left) << s.name << " rank " << r;
      EXPECT_EQ(rs.halo_right, right) << s.name << " rank " << r;
    }
    cols = next;
  }
}

INSTANTIATE_TEST_SUITE_P(VariantsRanksInputs, Shapes,
                         ::testing::Values(Case{"convnext_test", 1, 64, 256}, Case{"convnext_test", 2, 64, 256},
                                           Case{"convnext_test", 4, 64, 256}, Case{"convnext_test", 3, 32, 96},
                                           Case{"convnext_test", 8, 64, 256}, Case{"convnext_test", 2, 40, 448},
                                           Case{"convnext_atto", 4, 96, 512}, Case{"convnext_tiny", 2, 64, 128},
                                           Case{"convnext_xlarge", 4, 512, 2048},
                                           Case{"convnext_xxlarge", 8, 128, 2048}),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_sp" +
                                  std::to_string(std::get<1>(info.param)) + "_" +
                                  std::to_string(std::get<2>(info.param)) + "x" +
                                  std::to_string(std::get<3>(info.param));
                         });

TEST(Shapes, ThrowWhenAndOnlyWhenTheWidthCannotShard) {
  const LayerList layers = convnext_layers(*find_convnext_variant("convnext_test"), 10);
  int shardable = 0;
  for (const int sp : {1, 2, 3, 4})
    for (int64_t width = 1; width <= 300; ++width) {
      const bool expect = brute_shardable(layers, width, sp);
      shardable += expect;
      if (expect) {
        EXPECT_NO_THROW(layer_shapes(layers, 64, width, sp)) << width << " over " << sp;
      } else {
        EXPECT_THROW(layer_shapes(layers, 64, width, sp), util::Error) << width << " over " << sp;
      }
    }
  EXPECT_GT(shardable, 0);
}

TEST(Shapes, ErrorNamesTheLayerAndTheNearestWidths) {
  const LayerList layers = convnext_layers(*find_convnext_variant("convnext_tiny"), 10);
  try {
    layer_shapes(layers, 64, 200, 2);  // stripes of 100 are not divisible by the stem's 4 x 8
    FAIL() << "expected an error";
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.what()).find("stages."), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("192"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("256"), std::string::npos) << e.hint();
  }
}

TEST(Shapes, HeightTooSmallForAWindowThrows) {
  const LayerList layers = convnext_layers(*find_convnext_variant("convnext_test"), 10);
  EXPECT_NO_THROW(layer_shapes(layers, 32, 64, 1));
  EXPECT_THROW(layer_shapes(layers, 16, 64, 1), util::Error);  // 16 -> 4 -> 2 -> 1: the last 2x2 conv has 1 row
}

}  // namespace
}  // namespace halo::arch
