// The loss and matching-cost terms of mmdet's DETR heads the OpenLane-V2 baseline uses:
// sigmoid focal loss and FocalLossCost, box format conversion and (pairwise) generalised IoU.
#pragma once

#include <ATen/core/Tensor.h>

namespace halo::model {

// mmdet sigmoid_focal_loss, elementwise (no reduction): logits and 0/1 targets, same shape.
at::Tensor sigmoid_focal_loss(const at::Tensor& logits, const at::Tensor& targets, double alpha = 0.25,
                              double gamma = 2.0);

// mmdet FocalLossCost: logits (Q, C), labels (G) int64 -> (Q, G) cost of giving query q label g.
at::Tensor focal_cost(const at::Tensor& logits, const at::Tensor& labels, double alpha = 0.25, double gamma = 2.0);

// (..., 4) cx, cy, w, h -> x1, y1, x2, y2.
at::Tensor box_cxcywh_to_xyxy(const at::Tensor& boxes);

// Generalised IoU of x1y1x2y2 boxes, broadcasting (mmdet bbox_overlaps, mode giou, eps 1e-6).
at::Tensor generalized_iou(const at::Tensor& a, const at::Tensor& b);

}  // namespace halo::model
