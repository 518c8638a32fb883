// The baseline's training losses: per-sample Hungarian matching of lane and traffic-element
// queries, then focal / L1 / GIoU detection losses and focal topology losses on the matches.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "model/IpmViewTransform.h"
#include "model/OpenLaneOutputs.h"

namespace halo::model {

// One sample's labels as plain tensors (the trainer converts the data module's FrameTargets).
struct OpenLaneTargets {
  at::Tensor lane_points;  // (L, P, 3) ego frame (m), evenly spaced along each lane
  at::Tensor te_boxes;     // (T, 4) cx, cy, w, h normalised by the front view's input size
  at::Tensor te_labels;    // (T) int64 attribute 0..12
  at::Tensor lclc;         // (L, L) 0/1
  at::Tensor lcte;         // (L, T) 0/1
};

// Loss weights; the matching costs use the same numbers (as the baseline config does).
struct OpenLaneLossWeights {
  double lc_cls = 1.0, lc_bbox = 2.5;
  double te_cls = 1.0, te_bbox = 2.5, te_iou = 1.0;
  double lclc = 2.0, lcte = 2.0;
};

using Matches = std::vector<std::pair<int64_t, int64_t>>;  // (query, label) pairs

class OpenLaneLoss {
 public:
  OpenLaneLoss(OpenLaneLossWeights w, BevGrid bev, int64_t control_points = 5);

  // lc_loss_cls, lc_loss_bbox, te_loss_cls, te_loss_bbox, te_loss_iou,
  // topology_lclc_loss_cls, topology_lcte_loss_cls (weighted) and "loss", their sum.
  std::map<std::string, at::Tensor> operator()(const OpenLaneOutputs& out,
                                               const std::vector<OpenLaneTargets>& targets) const;

  // Lanes: FocalLossCost + L1 on the normalised control points. logits (Q), control (Q, C*3), gt (L, C*3).
  Matches match_lanes(const at::Tensor& logits, const at::Tensor& control, const at::Tensor& gt_control) const;
  // Traffic elements: FocalLossCost + L1 on cx, cy, w, h + GIoU cost. logits (Q, K), boxes (Q, 4).
  Matches match_elements(const at::Tensor& logits, const at::Tensor& boxes, const at::Tensor& gt_boxes,
                         const at::Tensor& gt_labels) const;
  // Labelled lane points (L, P, 3) -> endpoint-fixed Bezier control points normalised to the BEV range (L, C, 3).
  at::Tensor normalised_control(const at::Tensor& lane_points) const;

 private:
  OpenLaneLossWeights w_;
  BevGrid bev_;
  int64_t control_;
};

}  // namespace halo::model
