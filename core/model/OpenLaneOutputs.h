// What the OpenLane-V2 baseline predicts for a batch: lane and traffic-element detections
// with their query features, and the two topology logit matrices.
#pragma once

#include <ATen/core/Tensor.h>

namespace halo::model {

struct OpenLaneOutputs {
  at::Tensor lane_logits;   // (B, Ql) centerline score logits
  at::Tensor lane_control;  // (B, Ql, 5, 3) Bezier control points, normalised to the BEV range [0, 1]
  at::Tensor lane_points;   // (B, Ql, 11, 3) sampled centerline points, ego frame (m)
  at::Tensor lane_embed;    // (B, Ql, D) decoded lane queries
  at::Tensor te_logits;     // (B, Qt, 13) traffic-element attribute logits
  at::Tensor te_boxes;      // (B, Qt, 4) cx, cy, w, h normalised by the front view's input size
  at::Tensor te_embed;      // (B, Qt, D)
  at::Tensor lclc_logits;   // (B, Ql, Ql) lane i -> lane j connectivity logits
  at::Tensor lcte_logits;   // (B, Ql, Qt) lane i <-> traffic element j logits
};

}  // namespace halo::model
