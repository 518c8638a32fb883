// Reductions follow mmdet's DETRHead: detection sums divided by the number of labelled objects
// in the batch (at least 1); topology focal losses are means over all query pairs.
#include "model/OpenLaneLoss.h"

#include <torch/torch.h>

#include "model/Bezier.h"
#include "model/DetectionLosses.h"
#include "util/LinearAssignment.h"

namespace halo::model {

namespace {

Matches assign(const at::Tensor& cost) {  // (Q, G)
  if (cost.size(0) == 0 || cost.size(1) == 0) return {};
  at::Tensor c = cost.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  std::vector<double> v(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  return util::linear_sum_assignment(v, c.size(0), c.size(1));
}

// Query and label indices of the matches as int64 tensors on `device`.
std::pair<at::Tensor, at::Tensor> indices(const Matches& m, torch::Device device) {
  std::vector<int64_t> q, g;
  for (auto [a, b] : m) q.push_back(a), g.push_back(b);
  auto o = torch::TensorOptions().dtype(torch::kInt64);
  return {torch::tensor(q, o).to(device), torch::tensor(g, o).to(device)};
}

// Label index per query (-1 when unmatched).
std::vector<int64_t> owner(const Matches& m, int64_t queries) {
  std::vector<int64_t> o(static_cast<size_t>(queries), -1);
  for (auto [q, g] : m) o[static_cast<size_t>(q)] = g;
  return o;
}

// Pair targets (N, M): truth[owner_a(i), owner_b(j)] where both queries are matched, else 0.
at::Tensor pair_targets(const at::Tensor& truth, const std::vector<int64_t>& oa, const std::vector<int64_t>& ob,
                        const at::TensorOptions& o) {
  at::Tensor t = truth.to(torch::kCPU, torch::kFloat64);
  at::Tensor out = torch::zeros({static_cast<int64_t>(oa.size()), static_cast<int64_t>(ob.size())}, torch::kFloat64);
  auto acc = out.accessor<double, 2>();
  auto src = t.accessor<double, 2>();
  for (size_t i = 0; i < oa.size(); ++i)
    for (size_t j = 0; j < ob.size(); ++j)
      if (oa[i] >= 0 && ob[j] >= 0) acc[static_cast<int64_t>(i)][static_cast<int64_t>(j)] = src[oa[i]][ob[j]];
  return out.to(o);
}

}  // namespace

OpenLaneLoss::OpenLaneLoss(OpenLaneLossWeights w, BevGrid bev, int64_t control_points)
    : w_(w), bev_(bev), control_(control_points) {}

at::Tensor OpenLaneLoss::normalised_control(const at::Tensor& lane_points) const {
  auto o = lane_points.options();
  at::Tensor lo = torch::tensor({bev_.x[0], bev_.y[0], bev_.z[0]}, o);
  at::Tensor span = torch::tensor({bev_.x[1] - bev_.x[0], bev_.y[1] - bev_.y[0], bev_.z[1] - bev_.z[0]}, o);
  if (lane_points.size(0) == 0) return torch::zeros({0, control_, 3}, o);
  return (bezier_fit_endpoint_fixed(lane_points, control_) - lo) / span;
}

Matches OpenLaneLoss::match_lanes(const at::Tensor& logits, const at::Tensor& control, const at::Tensor& gt) const {
  if (gt.size(0) == 0) return {};
  at::Tensor labels = torch::zeros({gt.size(0)}, torch::TensorOptions().dtype(torch::kInt64).device(logits.device()));
  at::Tensor cost = w_.lc_cls * focal_cost(logits.unsqueeze(1), labels) + w_.lc_bbox * torch::cdist(control, gt, 1);
  return assign(cost);
}

Matches OpenLaneLoss::match_elements(const at::Tensor& logits, const at::Tensor& boxes, const at::Tensor& gt_boxes,
                                     const at::Tensor& gt_labels) const {
  if (gt_boxes.size(0) == 0) return {};
  at::Tensor giou = generalized_iou(box_cxcywh_to_xyxy(boxes).unsqueeze(1), box_cxcywh_to_xyxy(gt_boxes).unsqueeze(0));
  at::Tensor cost =
      w_.te_cls * focal_cost(logits, gt_labels) + w_.te_bbox * torch::cdist(boxes, gt_boxes, 1) - w_.te_iou * giou;
  return assign(cost);
}

std::map<std::string, at::Tensor> OpenLaneLoss::operator()(const OpenLaneOutputs& out,
                                                           const std::vector<OpenLaneTargets>& targets) const {
  const int64_t B = out.lane_logits.size(0), Ql = out.lane_logits.size(1), Qt = out.te_logits.size(1);
  const int64_t K = out.te_logits.size(2);
  auto o = out.lane_logits.options();
  const auto dev = out.lane_logits.device();
  at::Tensor zero = torch::zeros({}, o);
  at::Tensor lc_cls = zero, lc_bbox = zero, te_cls = zero, te_bbox = zero, te_iou = zero, lclc = zero, lcte = zero;
  int64_t lanes = 0, elements = 0;
  for (int64_t b = 0; b < B; ++b) {
    const OpenLaneTargets& t = targets.at(static_cast<size_t>(b));
    at::Tensor gt_ctrl = normalised_control(t.lane_points.to(o)).flatten(1);  // (L, C*3)
    at::Tensor pred_ctrl = out.lane_control[b].flatten(1);                    // (Ql, C*3)
    const Matches ml = match_lanes(out.lane_logits[b].detach(), pred_ctrl.detach(), gt_ctrl);
    at::Tensor gt_boxes = t.te_boxes.to(o), gt_labels = t.te_labels.to(dev, torch::kInt64);
    const Matches mt = match_elements(out.te_logits[b].detach(), out.te_boxes[b].detach(), gt_boxes, gt_labels);
    lanes += gt_ctrl.size(0);
    elements += gt_boxes.size(0);
    auto [lq, lg] = indices(ml, dev);
    auto [tq, tg] = indices(mt, dev);
    at::Tensor lane_target = torch::zeros({Ql}, o).index_fill(0, lq, 1.0);
    lc_cls = lc_cls + sigmoid_focal_loss(out.lane_logits[b], lane_target).sum();
    lc_bbox = lc_bbox + (pred_ctrl.index_select(0, lq) - gt_ctrl.index_select(0, lg)).abs().sum();
    at::Tensor te_target = torch::zeros({Qt, K}, o);
    if (!mt.empty()) te_target.index_put_({tq, gt_labels.index_select(0, tg)}, 1.0);
    te_cls = te_cls + sigmoid_focal_loss(out.te_logits[b], te_target).sum();
    at::Tensor pb = out.te_boxes[b].index_select(0, tq), gb = gt_boxes.index_select(0, tg);
    te_bbox = te_bbox + (pb - gb).abs().sum();
    te_iou = te_iou + (1 - generalized_iou(box_cxcywh_to_xyxy(pb), box_cxcywh_to_xyxy(gb))).sum();
    const auto lane_owner = owner(ml, Ql), te_owner = owner(mt, Qt);
    lclc = lclc + sigmoid_focal_loss(out.lclc_logits[b], pair_targets(t.lclc, lane_owner, lane_owner, o)).sum();
    lcte = lcte + sigmoid_focal_loss(out.lcte_logits[b], pair_targets(t.lcte, lane_owner, te_owner, o)).sum();
  }
  const double nl = static_cast<double>(std::max<int64_t>(lanes, 1)),
               nt = static_cast<double>(std::max<int64_t>(elements, 1));
  std::map<std::string, at::Tensor> l;
  l["lc_loss_cls"] = w_.lc_cls * lc_cls / nl;
  l["lc_loss_bbox"] = w_.lc_bbox * lc_bbox / nl;
  l["te_loss_cls"] = w_.te_cls * te_cls / nt;
  l["te_loss_bbox"] = w_.te_bbox * te_bbox / nt;
  l["te_loss_iou"] = w_.te_iou * te_iou / nt;
  l["topology_lclc_loss_cls"] = w_.lclc * lclc / static_cast<double>(B * Ql * Ql);
  l["topology_lcte_loss_cls"] = w_.lcte * lcte / static_cast<double>(B * Ql * Qt);
  at::Tensor total = zero;
  for (const auto& [k, v] : l) total = total + v;
  l["loss"] = total;
  return l;
}

}  // namespace halo::model
