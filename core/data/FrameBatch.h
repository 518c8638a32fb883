// What the OpenLane-V2 multi-view pipeline hands the model for one micro-batch: the images,
// the camera projections after resize/pad, and the labels transformed with the images.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace halo::data {

struct FrameTargets {
  at::Tensor lane_points;    // (L, 11, 3) float, ego frame, resampled evenly along the lane
  at::Tensor te_boxes;       // (T, 4) float, x1 y1 x2 y2 in the front view's *network input* pixels
  at::Tensor te_attributes;  // (T) int64, 0..12
  at::Tensor topology_lclc;  // (L, L) float 0/1
  at::Tensor topology_lcte;  // (L, T) float 0/1
};

struct FrameBatch {
  at::Tensor images;                  // (B, V, 3, H, W) float, normalised, padded; W may be this rank's stripe
  int64_t full_width = 0;             // W of the whole padded image (== images.size(-1) unless striped)
  int64_t stripe_begin = 0;           // first global column held in `images`
  at::Tensor lidar2img;               // (B, V, 4, 4) float: ego -> network-input pixels (after resize)
  at::Tensor image_hw;                // (B, V, 2) int64: valid (unpadded) H, W per view
  std::vector<FrameTargets> targets;  // B entries; empty for test splits
  std::vector<std::string> keys;      // B frame keys "split/segment/timestamp"
};

}  // namespace halo::data
