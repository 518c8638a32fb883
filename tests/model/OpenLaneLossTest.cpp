// The baseline's losses against hand computations on tiny tensors (float64) and Hungarian
// matching against a brute-force search over every assignment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <torch/torch.h>

#include "model/Bezier.h"
#include "model/DetectionLosses.h"
#include "model/OpenLaneLoss.h"

namespace halo::model {
namespace {

constexpr double kAlpha = 0.25;

double sig(double x) { return 1 / (1 + std::exp(-x)); }
// Focal loss of one logit, written out: -alpha (1-p)^2 log p for a positive, -(1-alpha) p^2 log(1-p) else.
double focal(double x, double t) {
  const double p = sig(x);
  return t > 0.5 ? -kAlpha * (1 - p) * (1 - p) * std::log(p) : -(1 - kAlpha) * p * p * std::log(1 - p);
}

TEST(DetectionLosses, FocalLossAndCostMatchTheFormula) {
  auto x = torch::tensor({-2.0, -0.3, 0.0, 0.7, 3.0}, torch::kFloat64);
  auto t = torch::tensor({0.0, 1.0, 1.0, 0.0, 1.0}, torch::kFloat64);
  auto l = sigmoid_focal_loss(x, t);
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_NEAR(l[i].item<double>(), focal(x[i].item<double>(), t[i].item<double>()), 1e-12) << i;
  // FocalLossCost: positive focal term minus the negative one, of the label's column.
  auto logits = torch::tensor({0.5, -1.0, 2.0, 0.1}, torch::kFloat64).view({2, 2});
  auto cost = focal_cost(logits, torch::tensor({1, 0, 1}));
  ASSERT_EQ(cost.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_NEAR(cost[0][0].item<double>(), focal(-1.0, 1) - focal(-1.0, 0), 1e-9);
  EXPECT_NEAR(cost[1][1].item<double>(), focal(2.0, 1) - focal(2.0, 0), 1e-9);
}

TEST(DetectionLosses, GeneralizedIouOfKnownBoxes) {
  auto a = torch::tensor({0.0, 0.0, 2.0, 2.0}, torch::kFloat64),
       b = torch::tensor({1.0, 1.0, 3.0, 3.0}, torch::kFloat64);
  EXPECT_NEAR(generalized_iou(a, b).item<double>(), 1.0 / 7 - 2.0 / 9, 1e-6);  // overlap 1, union 7, hull 9
  EXPECT_NEAR(generalized_iou(a, a).item<double>(), 1.0, 1e-6);
  auto c = torch::tensor({3.0, 0.0, 4.0, 2.0}, torch::kFloat64);  // disjoint: 0 - (8 - 6) / 8
  EXPECT_NEAR(generalized_iou(a, c).item<double>(), -0.25, 1e-6);
  auto xyxy = box_cxcywh_to_xyxy(torch::tensor({1.0, 1.0, 2.0, 2.0}, torch::kFloat64));
  EXPECT_TRUE(torch::allclose(xyxy, a));
}

// Smallest total cost over every injective query -> label map, by brute force.
double brute_force(const torch::Tensor& cost) {
  const int64_t Q = cost.size(0), G = cost.size(1);
  std::vector<int64_t> q(static_cast<size_t>(Q));
  std::iota(q.begin(), q.end(), 0);
  double best = std::numeric_limits<double>::infinity();
  do {  // the first G entries of each permutation are the queries given labels 0..G-1
    double s = 0;
    for (int64_t g = 0; g < G; ++g) s += cost[q[static_cast<size_t>(g)]][g].item<double>();
    best = std::min(best, s);
  } while (std::next_permutation(q.begin(), q.end()));
  return best;
}

double matched_cost(const Matches& m, const torch::Tensor& cost) {
  double s = 0;
  for (auto [q, g] : m) s += cost[q][g].item<double>();
  return s;
}

TEST(OpenLaneLoss, MatchingIsTheBruteForceOptimum) {
  OpenLaneLoss loss(OpenLaneLossWeights{}, BevGrid{});
  for (int seed = 0; seed < 5; ++seed) {
    torch::manual_seed(seed);
    const int64_t Q = 6, T = 3, K = 4;
    auto logits = torch::randn({Q, K}, torch::kFloat64), boxes = 0.2 + 0.6 * torch::rand({Q, 4}, torch::kFloat64);
    auto gt = 0.2 + 0.6 * torch::rand({T, 4}, torch::kFloat64);
    auto labels = torch::randint(0, K, {T});
    // The cost the baseline's assigner builds: focal 1, L1 (cx, cy, w, h) 2.5, GIoU 1.
    auto giou = generalized_iou(box_cxcywh_to_xyxy(boxes).unsqueeze(1), box_cxcywh_to_xyxy(gt).unsqueeze(0));
    auto l1 = (boxes.unsqueeze(1) - gt.unsqueeze(0)).abs().sum(-1);
    auto cost = focal_cost(logits, labels) + 2.5 * l1 - giou;
    const Matches m = loss.match_elements(logits, boxes, gt, labels);
    ASSERT_EQ(m.size(), static_cast<size_t>(T));
    EXPECT_NEAR(matched_cost(m, cost), brute_force(cost), 1e-9) << "seed " << seed;
    // Lanes: focal (one class) + 2.5 L1 over the 15 control coordinates.
    auto lane_logits = torch::randn({Q}, torch::kFloat64), ctrl = torch::rand({Q, 15}, torch::kFloat64);
    auto gt_ctrl = torch::rand({2, 15}, torch::kFloat64);
    auto lane_cost = focal_cost(lane_logits.unsqueeze(1), torch::zeros({2}, torch::kInt64)) +
                     2.5 * (ctrl.unsqueeze(1) - gt_ctrl.unsqueeze(0)).abs().sum(-1);
    const Matches ml = loss.match_lanes(lane_logits, ctrl, gt_ctrl);
    ASSERT_EQ(ml.size(), 2u);
    EXPECT_NEAR(matched_cost(ml, lane_cost), brute_force(lane_cost), 1e-9) << "seed " << seed;
  }
}

TEST(OpenLaneLoss, SevenKeysMatchAHandComputation) {
  // One sample: 2 lane queries, 2 element queries with 3 classes; one labelled lane and element.
  OpenLaneLoss loss(OpenLaneLossWeights{}, BevGrid{});
  auto f64 = torch::kFloat64;
  auto gt_ctrl =
      torch::tensor({0.6, 0.5, 0.6, 0.65, 0.52, 0.6, 0.7, 0.55, 0.6, 0.75, 0.56, 0.6, 0.8, 0.6, 0.6}, f64).view({5, 3});
  auto lo = torch::tensor({-50.0, -25.0, -3.0}, f64), span = torch::tensor({100.0, 50.0, 5.0}, f64);
  OpenLaneTargets t;
  t.lane_points = bezier_sample(gt_ctrl * span + lo, 11).unsqueeze(0);  // (1, 11, 3)
  t.te_boxes = torch::tensor({0.5, 0.4, 0.2, 0.1}, f64).view({1, 4});
  t.te_labels = torch::tensor({2}, torch::kInt64);
  t.lclc = torch::ones({1, 1}, f64);
  t.lcte = torch::ones({1, 1}, f64);
  OpenLaneOutputs o;
  o.lane_logits = torch::tensor({0.4, -1.2}, f64).view({1, 2});
  auto near = gt_ctrl + 0.01, far = torch::full({5, 3}, 0.1, f64);
  o.lane_control = torch::stack({near, far}).unsqueeze(0);  // query 0 matches
  o.te_logits = torch::tensor({-1.0, 0.2, 0.9, 0.3, -0.4, 0.1}, f64).view({1, 2, 3});
  o.te_boxes = torch::tensor({0.9, 0.9, 0.05, 0.05, 0.45, 0.42, 0.3, 0.1}, f64).view({1, 2, 4});  // query 1 matches
  o.lclc_logits = torch::tensor({1.5, -0.5, 0.2, -2.0}, f64).view({1, 2, 2});
  o.lcte_logits = torch::tensor({-0.7, 0.8, 0.3, -1.1}, f64).view({1, 2, 2});
  auto l = loss(o, {t});

  const double lc_cls = focal(0.4, 1) + focal(-1.2, 0);
  const double lc_bbox = 2.5 * 15 * 0.01;
  double te_cls = 0;
  const double te_logit[2][3] = {{-1.0, 0.2, 0.9}, {0.3, -0.4, 0.1}};
  for (int q = 0; q < 2; ++q)
    for (int k = 0; k < 3; ++k) te_cls += focal(te_logit[q][k], q == 1 && k == 2 ? 1 : 0);
  const double te_bbox = 2.5 * (0.05 + 0.02 + 0.1 + 0.0);
  // Query 1 box: x 0.30..0.60, y 0.37..0.47; label: x 0.40..0.60, y 0.35..0.45.
  const double inter = 0.2 * 0.08, uni = 0.03 + 0.02 - inter, hull = 0.3 * 0.12;
  const double te_iou = 1 - (inter / uni - (hull - uni) / hull);
  // Topology targets: lane query 0 <-> itself (lclc), lane query 0 <-> element query 1 (lcte).
  const double lclc = 2.0 * (focal(1.5, 1) + focal(-0.5, 0) + focal(0.2, 0) + focal(-2.0, 0)) / 4;
  const double lcte = 2.0 * (focal(-0.7, 0) + focal(0.8, 1) + focal(0.3, 0) + focal(-1.1, 0)) / 4;
  EXPECT_NEAR(l.at("lc_loss_cls").item<double>(), lc_cls, 1e-9);
  EXPECT_NEAR(l.at("lc_loss_bbox").item<double>(), lc_bbox, 1e-7);
  EXPECT_NEAR(l.at("te_loss_cls").item<double>(), te_cls, 1e-9);
  EXPECT_NEAR(l.at("te_loss_bbox").item<double>(), te_bbox, 1e-9);
  EXPECT_NEAR(l.at("te_loss_iou").item<double>(), te_iou, 1e-6);
  EXPECT_NEAR(l.at("topology_lclc_loss_cls").item<double>(), lclc, 1e-9);
  EXPECT_NEAR(l.at("topology_lcte_loss_cls").item<double>(), lcte, 1e-9);
  EXPECT_NEAR(l.at("loss").item<double>(), lc_cls + lc_bbox + te_cls + te_bbox + te_iou + lclc + lcte, 1e-6);
  EXPECT_EQ(l.size(), 8u);
}

TEST(OpenLaneLoss, SampleWithoutLabelsOnlyPushesScoresDown) {
  OpenLaneLoss loss(OpenLaneLossWeights{}, BevGrid{});
  auto f64 = torch::kFloat64;
  OpenLaneTargets t{torch::zeros({0, 11, 3}, f64), torch::zeros({0, 4}, f64), torch::zeros({0}, torch::kInt64),
                    torch::zeros({0, 0}, f64), torch::zeros({0, 0}, f64)};
  OpenLaneOutputs o;
  o.lane_logits = torch::zeros({1, 3}, f64);
  o.lane_control = torch::rand({1, 3, 5, 3}, f64);
  o.te_logits = torch::zeros({1, 2, 13}, f64);
  o.te_boxes = torch::rand({1, 2, 4}, f64);
  o.lclc_logits = torch::zeros({1, 3, 3}, f64);
  o.lcte_logits = torch::zeros({1, 3, 2}, f64);
  auto l = loss(o, {t});
  EXPECT_NEAR(l.at("lc_loss_cls").item<double>(), 3 * focal(0, 0), 1e-12);  // divided by max(0, 1)
  EXPECT_NEAR(l.at("te_loss_cls").item<double>(), 26 * focal(0, 0), 1e-12);
  EXPECT_EQ(l.at("lc_loss_bbox").item<double>(), 0.0);
  EXPECT_EQ(l.at("te_loss_iou").item<double>(), 0.0);
  EXPECT_NEAR(l.at("topology_lclc_loss_cls").item<double>(), 2.0 * focal(0, 0), 1e-12);
}

}  // namespace
}  // namespace halo::model
