// The OpenLane-V2 baseline's structure: every head's output shape, checkpoint names, the
// Bezier sampling of the lane head and the IPM view transform on cameras with known views.
#include <gtest/gtest.h>

#include <cmath>

#include <torch/torch.h>

#include "model/Bezier.h"
#include "model/OpenLaneBaseline.h"
#include "parallel/Communicator.h"

namespace halo::model {
namespace {

using Shape = std::vector<int64_t>;

// V cameras 1.5 m up, yaw 2*pi*v/V, 90 degree field of view: ego -> input pixels.
torch::Tensor ring(int64_t V, int64_t H, int64_t W) {
  std::vector<torch::Tensor> out;
  for (int64_t v = 0; v < V; ++v) {
    const double yaw = 2 * M_PI * static_cast<double>(v) / static_cast<double>(V), c = std::cos(yaw), s = std::sin(yaw);
    auto K = torch::tensor({W / 2.0, 0.0, W / 2.0, 0.0, W / 2.0, H / 2.0, 0.0, 0.0, 1.0}, torch::kFloat64).view({3, 3});
    auto R = torch::tensor({s, -c, 0.0, 0.0, 0.0, -1.0, c, s, 0.0}, torch::kFloat64).view({3, 3});
    auto P = torch::eye(4, torch::kFloat64);
    P.slice(0, 0, 3).slice(1, 0, 3).copy_(torch::matmul(K, R));
    P.slice(0, 0, 3).select(1, 3).copy_(
        torch::matmul(K, -torch::matmul(R, torch::tensor({0.0, 0.0, 1.5}, torch::kFloat64))));
    out.push_back(P);
  }
  return torch::stack(out).to(torch::kFloat32);
}

OpenLaneBaselineOptions tiny() {
  OpenLaneBaselineOptions o;
  o.dim = 16;
  o.ffn = 32;
  return o;
}

TEST(OpenLaneBaseline, HeadsHaveTheBaselineShapes) {
  torch::manual_seed(0);
  OpenLaneBaseline m("convnext_test", tiny());
  const int64_t B = 2, V = 3, H = 64, W = 96;
  auto images = parallel::shard_evenly(torch::randn({B * V, 3, H, W}), parallel::Communicator::solo());
  auto l2i = ring(V, H, W).unsqueeze(0).expand({B, V, 4, 4});
  auto hw = torch::tensor({H, W}).view({1, 1, 2}).expand({B, V, 2});
  OpenLaneOutputs o = m->forward(images, l2i, hw);
  EXPECT_EQ(o.lane_logits.sizes(), (Shape{B, 50}));
  EXPECT_EQ(o.lane_control.sizes(), (Shape{B, 50, 5, 3}));
  EXPECT_EQ(o.lane_points.sizes(), (Shape{B, 50, 11, 3}));
  EXPECT_EQ(o.lane_embed.sizes(), (Shape{B, 50, 16}));
  EXPECT_EQ(o.te_logits.sizes(), (Shape{B, 30, 13}));
  EXPECT_EQ(o.te_boxes.sizes(), (Shape{B, 30, 4}));
  EXPECT_EQ(o.te_embed.sizes(), (Shape{B, 30, 16}));
  EXPECT_EQ(o.lclc_logits.sizes(), (Shape{B, 50, 50}));
  EXPECT_EQ(o.lcte_logits.sizes(), (Shape{B, 50, 30}));
  EXPECT_GE(o.te_boxes.min().item<double>(), 0.0);
  EXPECT_LE(o.te_boxes.max().item<double>(), 1.0);
  // The 11 points are the Bezier curve of the control points: its ends are the end points.
  auto lo = torch::tensor({-50.0, -25.0, -3.0}), span = torch::tensor({100.0, 50.0, 5.0});
  auto ctrl_m = o.lane_control * span + lo;
  EXPECT_TRUE(torch::allclose(o.lane_points.select(2, 0), ctrl_m.select(2, 0), 1e-5, 1e-4));
  EXPECT_TRUE(torch::allclose(o.lane_points.select(2, 10), ctrl_m.select(2, 4), 1e-5, 1e-4));
  // Every parameter gets a gradient (no dead branches: GradSync and the optimizer see all).
  (o.lane_logits.sum() + o.lane_points.sum() + o.te_logits.sum() + o.te_boxes.sum() + o.lclc_logits.sum() +
   o.lcte_logits.sum())
      .backward();
  for (const auto& p : m->named_parameters()) {
    EXPECT_TRUE(p.value().grad().defined()) << p.key();
  }
}

TEST(OpenLaneBaseline, ParameterNamesAndPlacement) {
  OpenLaneBaseline m("convnext_test", tiny());
  auto params = m->named_parameters();
  for (const char* key : {"img_backbone.stem.0.weight", "img_backbone.stages.3.blocks.0.conv_dw.weight",
                          "img_neck.lateral_convs.1.weight", "img_neck.fpn_convs.0.weight",
                          "img_view_transformer.proj.weight", "lc_head.query_embedding.weight",
                          "lc_head.decoder.layers.0.multihead_attn.in_proj_weight", "lc_head.cls_branch.bias",
                          "te_head.reg_branch.4.weight", "lclc_head.mlp_o1.0.weight", "lcte_head.classifier.4.bias"})
    EXPECT_TRUE(params.contains(key)) << key;
  for (const auto& p : params) {
    EXPECT_EQ(p.key().find("img_backbone.head"), std::string::npos) << p.key();
  }
  EXPECT_EQ(params["lc_head.query_embedding.weight"].sizes(), (Shape{50, 16}));
  EXPECT_EQ(params["te_head.cls_branch.weight"].sizes(), (Shape{13, 16}));
  EXPECT_EQ(params["img_view_transformer.proj.weight"].sizes(), (Shape{16, 16 * 10, 1, 1}));
  EXPECT_EQ(OpenLaneBaselineImpl::placement("img_neck.fpn_convs.0.weight"), parallel::GradPlacement::Partial);
  EXPECT_EQ(OpenLaneBaselineImpl::placement("img_backbone.stem.0.weight"), parallel::GradPlacement::Partial);
  EXPECT_EQ(OpenLaneBaselineImpl::placement("lc_head.cls_branch.bias"), parallel::GradPlacement::Replicate);
}

TEST(IpmViewTransform, CellsTakeTheCameraThatSeesThem) {
  // Two cameras (front, back) with constant maps 1 and 3; proj averages the ten planes.
  IpmViewTransform ipm(1, BevGrid{});
  {
    torch::NoGradGuard g;
    ipm->proj->weight.fill_(0.1);
    ipm->proj->bias.zero_();
  }
  const int64_t H = 64, W = 64;
  auto feats = torch::cat({torch::full({1, 1, 4, 4}, 1.0), torch::full({1, 1, 4, 4}, 3.0)});
  auto bev =
      ipm->forward(feats, ring(2, H, W).unsqueeze(0), torch::tensor({H, W}).view({1, 1, 2}).expand({1, 2, 2}), {H, W});
  ASSERT_EQ(bev.sizes(), (Shape{1, 1, 50, 100}));
  auto at = [&](double x, double y) {  // cell containing ego (x, y)
    return bev[0][0][static_cast<int64_t>(y + 25)][static_cast<int64_t>(x + 50)].item<double>();
  };
  EXPECT_NEAR(at(20.5, 0.5), 1.0, 1e-5);   // ahead: front camera only
  EXPECT_NEAR(at(-20.5, 0.5), 3.0, 1e-5);  // behind: back camera only
  EXPECT_NEAR(at(0.5, 20.5), 0.0, 1e-6);   // to the side: outside both 90 degree views
}

TEST(Bezier, FitRecoversTheControlPoints) {
  auto basis = bernstein_basis(5, 11, torch::kFloat64);
  EXPECT_TRUE(torch::allclose(basis.sum(1), torch::ones({11}, torch::kFloat64)));
  EXPECT_NEAR(basis[5][2].item<double>(), 6 * std::pow(0.5, 4), 1e-12);  // C(4,2) t^2 (1-t)^2 at t = 0.5
  torch::manual_seed(1);
  auto ctrl = torch::randn({3, 5, 3}, torch::kFloat64);
  auto fit = bezier_fit_endpoint_fixed(bezier_sample(ctrl, 11), 5);
  EXPECT_TRUE(torch::allclose(fit, ctrl, 1e-9, 1e-9));
}

}  // namespace
}  // namespace halo::model
