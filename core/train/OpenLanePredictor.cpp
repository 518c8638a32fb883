// Lanes: the Bezier control points de-normalised from the BEV range and sampled at
// lane_points (model::bezier_sample); boxes: (cx, cy, w, h) -> corners -> original pixels.
#include "train/OpenLanePredictor.h"

#include <torch/torch.h>

#include "data/FrameSample.h"
#include "model/Bezier.h"

namespace halo::train {

eval::FramePrediction OpenLanePredictor::decode(const model::OpenLaneOutputs& out, int64_t b,
                                                std::array<int64_t, 2> input_hw,
                                                std::array<int64_t, 2> original_wh) const {
  torch::NoGradGuard no_grad;
  auto f64 = [b](const at::Tensor& t) { return t[b].detach().to(torch::kCPU, torch::kFloat64).contiguous(); };
  const at::Tensor lo = torch::tensor({bev_.x[0], bev_.y[0], bev_.z[0]}, torch::kFloat64);
  const at::Tensor span =
      torch::tensor({bev_.x[1] - bev_.x[0], bev_.y[1] - bev_.y[0], bev_.z[1] - bev_.z[0]}, torch::kFloat64);
  const at::Tensor points = model::bezier_sample(f64(out.lane_control) * span + lo, lane_points_);  // (Ql, P, 3) m
  const at::Tensor lane_conf = f64(out.lane_logits).sigmoid();                                      // (Ql)
  const at::Tensor te_prob = f64(out.te_logits).sigmoid();                                          // (Qt, 13)
  const auto [te_conf, te_attr] = te_prob.max(1);                                                   // (Qt), (Qt)
  const at::Tensor boxes = f64(out.te_boxes);                                                       // (Qt, 4) cx cy w h
  const at::Tensor lclc = f64(out.lclc_logits).sigmoid();                                           // (Ql, Ql)
  const at::Tensor lcte = f64(out.lcte_logits).sigmoid();                                           // (Ql, Qt)
  const int64_t Ql = points.size(0), P = points.size(1), Qt = boxes.size(0);
  data::LoaderOptions resize;
  resize.height = input_hw[0];
  resize.width = input_hw[1];
  const auto m = data::resize_map(original_wh[0], original_wh[1], resize);  // x' = sx x + ox, y' = sy y + oy
  auto pts = points.accessor<double, 3>();
  auto bx = boxes.accessor<double, 2>();
  eval::FramePrediction p;
  for (int64_t i = 0; i < Ql; ++i) {
    eval::LanePrediction lane{i, {}, lane_conf[i].item<double>()};
    for (int64_t k = 0; k < P; ++k) lane.points.push_back({pts[i][k][0], pts[i][k][1], pts[i][k][2]});
    p.lanes.push_back(std::move(lane));
  }
  const double W = static_cast<double>(input_hw[1]), H = static_cast<double>(input_hw[0]);
  for (int64_t j = 0; j < Qt; ++j) {
    const double cx = bx[j][0] * W, cy = bx[j][1] * H, w = bx[j][2] * W, h = bx[j][3] * H;  // input pixels
    eval::ElementPrediction e;
    e.id = Ql + j;
    e.attribute = te_attr[j].item<int64_t>();
    e.confidence = te_conf[j].item<double>();
    e.box = {(cx - w / 2 - m[1]) / m[0], (cy - h / 2 - m[3]) / m[2], (cx + w / 2 - m[1]) / m[0],
             (cy + h / 2 - m[3]) / m[2]};
    p.elements.push_back(e);
  }
  auto rows = [](const at::Tensor& t) {
    std::vector<std::vector<double>> r(static_cast<size_t>(t.size(0)));
    auto a = t.accessor<double, 2>();
    for (int64_t i = 0; i < t.size(0); ++i)
      for (int64_t j = 0; j < t.size(1); ++j) r[static_cast<size_t>(i)].push_back(a[i][j]);
    return r;
  };
  p.topology_lclc = rows(lclc);
  p.topology_lcte = rows(lcte);
  return p;
}

}  // namespace halo::train
