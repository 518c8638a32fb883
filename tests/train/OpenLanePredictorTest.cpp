// Decoding a hand-made baseline output into the devkit's prediction dict: lanes back in ego
// metres from normalised Bezier control points, boxes back in the original front-view pixels.
#include <gtest/gtest.h>

#include <cmath>

#include <torch/torch.h>

#include "data/FrameSample.h"
#include "train/OpenLanePredictor.h"

namespace halo::train {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(OpenLanePredictor, LanesInMetresBoxesInOriginalPixelsSigmoidScores) {
  const model::BevGrid bev;  // x [-50, 50], y [-25, 25], z [-3, 2]
  const int64_t Ql = 2, Qt = 3;
  model::OpenLaneOutputs out;
  // Sample 1 of a batch of 2 (sample 0 is noise that must not leak in).
  out.lane_logits = torch::randn({2, Ql}, torch::kFloat64);
  out.lane_logits[1] = torch::tensor({0.3, -2.0}, torch::kFloat64);
  out.lane_control = torch::rand({2, Ql, 5, 3}, torch::kFloat64);
  // Lane 0: collinear, evenly spaced control points from x = -25 m to 25 m at y = 5 m, z = 0 m
  // -> the 11 curve points are x = -25 + 5k exactly.
  for (int64_t c = 0; c < 5; ++c) {
    out.lane_control[1][0][c] = torch::tensor({0.25 + 0.125 * c, 0.6, 0.6}, torch::kFloat64);
    out.lane_control[1][1][c] = torch::tensor({0.5, 0.5, 0.6}, torch::kFloat64);  // lane 1: the ego origin
  }
  out.te_logits = torch::full({2, Qt, 13}, -3.0, torch::kFloat64);
  out.te_logits[1][0][4] = 1.5;   // element 0: attribute 4
  out.te_logits[1][1][12] = 0.2;  // element 1: attribute 12
  out.te_logits[1][2][0] = -0.5;
  // Boxes given in original pixels of a 2048 x 1550 front image, taken to the 128 x 64 input
  // exactly as the data pipeline maps labels, then normalised to (cx, cy, w, h).
  const std::array<std::array<double, 4>, Qt> original{
      {{400, 300, 800, 700}, {0, 0, 2047, 1549}, {1000.5, 20.25, 1010, 30}}};
  data::LoaderOptions o;
  o.height = 64;
  o.width = 128;
  const auto m = data::resize_map(2048, 1550, o);
  out.te_boxes = torch::rand({2, Qt, 4}, torch::kFloat64);
  for (int64_t j = 0; j < Qt; ++j) {
    const auto& b = original[j];
    const double x1 = m[0] * b[0] + m[1], y1 = m[2] * b[1] + m[3], x2 = m[0] * b[2] + m[1], y2 = m[2] * b[3] + m[3];
    out.te_boxes[1][j] =
        torch::tensor({(x1 + x2) / 2 / 128, (y1 + y2) / 2 / 64, (x2 - x1) / 128, (y2 - y1) / 64}, torch::kFloat64);
  }
  out.lclc_logits = torch::randn({2, Ql, Ql}, torch::kFloat64);
  out.lcte_logits = torch::randn({2, Ql, Qt}, torch::kFloat64);

  const eval::FramePrediction p = OpenLanePredictor(bev, 11).decode(out, 1, {64, 128}, {2048, 1550});

  ASSERT_EQ(p.lanes.size(), 2u);
  ASSERT_EQ(p.lanes[0].points.size(), 11u);
  for (size_t k = 0; k < 11; ++k) {
    EXPECT_NEAR(p.lanes[0].points[k][0], -25.0 + 5.0 * static_cast<double>(k), 1e-9) << k;
    EXPECT_NEAR(p.lanes[0].points[k][1], 5.0, 1e-9);
    EXPECT_NEAR(p.lanes[0].points[k][2], 0.0, 1e-9);
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(p.lanes[1].points[k][c], 0.0, 1e-9);
    }
  }
  EXPECT_NEAR(p.lanes[0].confidence, sigmoid(0.3), 1e-12);
  EXPECT_NEAR(p.lanes[1].confidence, sigmoid(-2.0), 1e-12);

  ASSERT_EQ(p.elements.size(), 3u);
  const int64_t attributes[] = {4, 12, 0};
  const double scores[] = {1.5, 0.2, -0.5};
  for (size_t j = 0; j < 3; ++j) {
    EXPECT_EQ(p.elements[j].attribute, attributes[j]);
    EXPECT_NEAR(p.elements[j].confidence, sigmoid(scores[j]), 1e-12);
    for (size_t c = 0; c < 4; ++c) {
      EXPECT_NEAR(p.elements[j].box[c], original[j][c], 1e-9) << j << " " << c;
    }
  }
  // Ids unique over lanes and elements.
  EXPECT_EQ(p.lanes[0].id, 0);
  EXPECT_EQ(p.lanes[1].id, 1);
  EXPECT_EQ(p.elements[0].id, 2);
  EXPECT_EQ(p.elements[2].id, 4);

  ASSERT_EQ(p.topology_lclc.size(), 2u);
  ASSERT_EQ(p.topology_lcte.size(), 2u);
  for (int64_t i = 0; i < Ql; ++i) {
    ASSERT_EQ(p.topology_lclc[i].size(), 2u);
    ASSERT_EQ(p.topology_lcte[i].size(), 3u);
    for (int64_t j = 0; j < Ql; ++j)
      EXPECT_NEAR(p.topology_lclc[i][j], sigmoid(out.lclc_logits[1][i][j].item<double>()), 1e-12);
    for (int64_t j = 0; j < Qt; ++j)
      EXPECT_NEAR(p.topology_lcte[i][j], sigmoid(out.lcte_logits[1][i][j].item<double>()), 1e-12);
  }
}

}  // namespace
}  // namespace halo::train
