// Formulas as mmdet 2.x writes them (py_sigmoid_focal_loss, FocalLossCost, bbox_overlaps) so
// the baseline's loss values and matches carry over.
#include "model/DetectionLosses.h"

#include <torch/torch.h>

namespace halo::model {

at::Tensor sigmoid_focal_loss(const at::Tensor& logits, const at::Tensor& targets, double alpha, double gamma) {
  at::Tensor p = torch::sigmoid(logits);
  at::Tensor t = targets.to(logits.scalar_type());
  at::Tensor pt = (1 - p) * t + p * (1 - t);
  at::Tensor weight = (alpha * t + (1 - alpha) * (1 - t)) * pt.pow(gamma);
  return torch::binary_cross_entropy_with_logits(logits, t, {}, {}, at::Reduction::None) * weight;
}

at::Tensor focal_cost(const at::Tensor& logits, const at::Tensor& labels, double alpha, double gamma) {
  constexpr double eps = 1e-12;
  at::Tensor p = torch::sigmoid(logits);  // (Q, C)
  at::Tensor neg = -(1 - p + eps).log() * (1 - alpha) * p.pow(gamma);
  at::Tensor pos = -(p + eps).log() * alpha * (1 - p).pow(gamma);
  return pos.index_select(1, labels) - neg.index_select(1, labels);  // (Q, G)
}

at::Tensor box_cxcywh_to_xyxy(const at::Tensor& b) {
  at::Tensor cx = b.select(-1, 0), cy = b.select(-1, 1), w = b.select(-1, 2), h = b.select(-1, 3);
  return torch::stack({cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h}, -1);
}

at::Tensor generalized_iou(const at::Tensor& a, const at::Tensor& b) {
  constexpr double eps = 1e-6;
  auto c = [](const at::Tensor& t, int64_t i) { return t.select(-1, i); };
  at::Tensor area_a = (c(a, 2) - c(a, 0)) * (c(a, 3) - c(a, 1));
  at::Tensor area_b = (c(b, 2) - c(b, 0)) * (c(b, 3) - c(b, 1));
  at::Tensor iw = (torch::min(c(a, 2), c(b, 2)) - torch::max(c(a, 0), c(b, 0))).clamp_min(0);
  at::Tensor ih = (torch::min(c(a, 3), c(b, 3)) - torch::max(c(a, 1), c(b, 1))).clamp_min(0);
  at::Tensor overlap = iw * ih;
  at::Tensor unions = (area_a + area_b - overlap).clamp_min(eps);
  at::Tensor ew = (torch::max(c(a, 2), c(b, 2)) - torch::min(c(a, 0), c(b, 0))).clamp_min(0);
  at::Tensor eh = (torch::max(c(a, 3), c(b, 3)) - torch::min(c(a, 1), c(b, 1))).clamp_min(0);
  at::Tensor enclose = (ew * eh).clamp_min(eps);
  return overlap / unions - (enclose - unions) / enclose;
}

}  // namespace halo::model
