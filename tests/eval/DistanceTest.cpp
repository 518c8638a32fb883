// The devkit's distances on cases worked by hand: discrete Fréchet, Chamfer (closed curves
// lose their last point), the ego relaxation, IoU distance and the Chamfer pre-mask.
#include <cmath>

#include <gtest/gtest.h>

#include "eval/Distance.h"

namespace halo::eval {
namespace {

TEST(EvalDistance, FrechetOfACurveAndItsShiftIsTheShift) {
  Curve a;
  for (int i = 0; i < 201; ++i) a.push_back({0.25 * i, 0.01 * i * i / 100.0, 0.0});
  Curve b = a;
  for (auto& p : b) p = {p[0] + 0.3, p[1] + 0.4, p[2]};
  EXPECT_DOUBLE_EQ(frechet_distance(a, a), 0.0);
  EXPECT_NEAR(frechet_distance(a, b), 0.5, 1e-12);
}

TEST(EvalDistance, FrechetCouplesInOrder) {
  // The middle point of pred must pair with one end of gt: sqrt(2), not 1.
  const Curve gt = {{0, 1, 0}, {2, 1, 0}};
  const Curve pred = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
  EXPECT_DOUBLE_EQ(frechet_distance(gt, pred), std::sqrt(2.0));
  // Reversed direction costs the whole length.
  const Curve reversed = {{2, 0, 0}, {1, 0, 0}, {0, 0, 0}};
  EXPECT_DOUBLE_EQ(frechet_distance(gt, reversed), std::sqrt(5.0));
}

TEST(EvalDistance, ChamferAveragesBothDirections) {
  const Curve gt = {{0, 0, 0}, {1, 0, 0}};
  const Curve pred = {{0, 1, 0}};
  EXPECT_DOUBLE_EQ(chamfer_distance(gt, pred), (1.0 + (1.0 + std::sqrt(2.0)) / 2) / 2);
  const Curve closed = {{0, 0, 0}, {1, 0, 0}, {0, 0, 0}};  // last point dropped
  EXPECT_DOUBLE_EQ(chamfer_distance(closed, pred), (1.0 + (1.0 + std::sqrt(2.0)) / 2) / 2);
}

TEST(EvalDistance, RelaxationShrinksWithDistanceToEgoDownToHalf) {
  EXPECT_NEAR(relaxation_factor({{6, 8, 0}, {30, 40, 0}}), 1 - 5e-3 * 10, 1e-7);
  EXPECT_DOUBLE_EQ(relaxation_factor({{0, 150, 0}}), 0.5);
}

TEST(EvalDistance, IouDistance) {
  EXPECT_DOUBLE_EQ(iou_distance({0, 0, 2, 2}, {0, 0, 2, 2}), 0.0);
  EXPECT_DOUBLE_EQ(iou_distance({0, 0, 2, 2}, {5, 5, 6, 6}), 1.0);
  EXPECT_DOUBLE_EQ(iou_distance({0, 0, 2, 2}, {1, 0, 3, 2}), 1.0 - 2.0 / 6.0);
}

TEST(EvalDistance, LanesBeyondTheChamferMaskGetTheFillDistance) {
  data::LaneCenterline gt;
  for (int i = 0; i < 201; ++i) gt.points.push_back({0.1 * i, 0.0, 0.0});
  LanePrediction near, far;
  for (const auto& p : gt.points) {
    near.points.push_back({p[0], p[1] + 0.5, p[2]});
    far.points.push_back({p[0], p[1] + 10.0, p[2]});
  }
  const Matrix d = lane_distances({gt}, {near, far});
  ASSERT_EQ(d.rows, 1);
  ASSERT_EQ(d.cols, 2);
  EXPECT_NEAR(d(0, 0), 0.5, 1e-6);  // the lane starts at the ego origin: no relaxation
  EXPECT_EQ(d(0, 1), 1024.0);
}

}  // namespace
}  // namespace halo::eval
