// Greedy matching, the 11-point AP and the per-vertex topology AP on cases worked by hand,
// including the devkit's quirks (a taken nearest gt is not replaced by the next one).
#include <gtest/gtest.h>

#include "eval/AveragePrecision.h"

namespace halo::eval {
namespace {

TEST(EvalAp, MatchingTakesTheNearestGtInConfidenceOrderOnly) {
  Matrix d(2, 2);
  d(0, 0) = 0.2;
  d(1, 0) = 0.5;  // pred 0: nearest gt 0
  d(0, 1) = 0.1;
  d(1, 1) = 0.3;  // pred 1: nearest gt 0 too, gt 1 would be within reach
  const FrameMatches m = match_predictions(d, {0.4, 0.9}, 1.0);
  EXPECT_EQ(m.tp, (std::vector<float>{0, 1}));
  EXPECT_EQ(m.fp, (std::vector<float>{1, 0}));
  EXPECT_EQ(m.gt_index, (std::vector<int64_t>{-1, 0}));
  const FrameMatches far = match_predictions(d, {0.4, 0.9}, 0.15);
  EXPECT_EQ(far.tp, (std::vector<float>{0, 1}));
  const FrameMatches no_gt = match_predictions(Matrix(0, 2), {0.4, 0.9}, 1.0);
  EXPECT_EQ(no_gt.fp, (std::vector<float>{1, 1}));
}

TEST(EvalAp, ElevenPointAp) {
  FrameMatches hit_first{{0.9, 0.8}, {1, 0}, {0, 1}, {0, -1}};
  EXPECT_FLOAT_EQ(average_precision({hit_first}, 1), 1.0f);
  FrameMatches hit_second{{0.9, 0.8}, {0, 1}, {1, 0}, {-1, 0}};
  EXPECT_FLOAT_EQ(average_precision({hit_second}, 1), 0.5f);
  // Half the gts found, at full precision: recall thresholds 0..0.5 score 1, the rest 0.
  FrameMatches half{{0.7}, {1}, {0}, {0}};
  EXPECT_FLOAT_EQ(average_precision({half}, 2), 6.0f / 11.0f);
  EXPECT_FLOAT_EQ(average_precision({FrameMatches{}}, 0), 1.0f);
  EXPECT_FLOAT_EQ(average_precision({FrameMatches{}}, 3), 0.0f);
}

TEST(EvalAp, PerVertexAp) {
  // True neighbours {1, 3}; predicted 1, 2, 3 by descending score: precisions 1 and 2/3 at the hits.
  EXPECT_FLOAT_EQ(vertex_average_precision({1, 3}, {1, 2, 3}, {0.9, 0.8, 0.7}), (1.0f + 2.0f / 3.0f) / 2.0f);
  EXPECT_FLOAT_EQ(vertex_average_precision({1, 3}, {2, 3, 1}, {0.8, 0.7, 0.9}), (1.0f + 2.0f / 3.0f) / 2.0f);
  EXPECT_FLOAT_EQ(vertex_average_precision({}, {}, {}), 1.0f);
  EXPECT_FLOAT_EQ(vertex_average_precision({}, {2}, {0.7}), 0.0f);
  EXPECT_FLOAT_EQ(vertex_average_precision({2}, {}, {}), 0.0f);
}

}  // namespace
}  // namespace halo::eval
