// Turns the OpenLane-V2 baseline's outputs into the devkit's prediction dict: centerlines in
// ego metres, traffic elements in original front-view pixels, sigmoid topology confidences.
#pragma once

#include <cstdint>

#include "eval/Predictions.h"
#include "model/IpmViewTransform.h"
#include "model/OpenLaneOutputs.h"

namespace halo::train {

class OpenLanePredictor {
 public:
  // `bev`: the range the lane control points are normalised to; `lane_points`: points per
  // centerline (the devkit's 11).
  OpenLanePredictor(model::BevGrid bev, int64_t lane_points) : bev_(bev), lane_points_(lane_points) {}

  // Sample `b` of `out`. `input_hw`: the front view's valid network-input size (H, W) that the
  // boxes are normalised by; `original_wh`: the front image's size (W, H) in its file, the
  // resize (data::resize_map) is undone so boxes come back in those pixels. Ids: lanes
  // 0..Ql-1, elements Ql..Ql+Qt-1 (unique in the frame, as the devkit wants).
  eval::FramePrediction decode(const model::OpenLaneOutputs& out, int64_t b, std::array<int64_t, 2> input_hw,
                               std::array<int64_t, 2> original_wh) const;

 private:
  model::BevGrid bev_;
  int64_t lane_points_;
};

}  // namespace halo::train
