// Synthetic OpenLane-V2 batches generated on the fly (until the data module's pipeline is
// wired in): a camera ring, random curved lanes, traffic elements and topology, drawn into the views.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "model/OpenLaneLoss.h"

namespace halo::train {

struct OpenLaneSample {
  at::Tensor images;                            // (N, V, 3, H, W) float
  at::Tensor lidar2img;                         // (N, V, 4, 4) ego -> input pixels
  at::Tensor image_hw;                          // (N, V, 2) valid input size
  std::vector<model::OpenLaneTargets> targets;  // N entries
};

class OpenLaneSynthetic {
 public:
  OpenLaneSynthetic(int64_t views, int64_t height, int64_t width, uint64_t seed);
  // Samples [first, first + count): a pure function of the index (same on every sp rank).
  OpenLaneSample batch(int64_t first, int64_t count) const;
  // (V, 4, 4): V pinhole cameras 1.5 m above the ego origin, yaw 2*pi*v/V (view 0 looks
  // forward), 90 degree horizontal field of view.
  static at::Tensor camera_ring(int64_t views, int64_t height, int64_t width);

 private:
  int64_t views_, height_, width_;
  uint64_t seed_;
};

}  // namespace halo::train
