// What a model predicts for OpenLane-V2 frames, as the devkit's prediction dict holds it:
// scored lane centerlines and traffic elements, and the two topology matrices.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/Frame.h"

namespace halo::eval {

struct LanePrediction {
  int64_t id = 0;
  std::vector<data::Vec3> points;  // any number (>= 1) of 3-D points in the ego frame (m)
  double confidence = 0.0;
};

struct ElementPrediction {
  int64_t id = 0;
  int64_t attribute = 0;        // 0..12 as in TRAFFIC_ELEMENT_ATTRIBUTE
  std::array<double, 4> box{};  // x1, y1, x2, y2 in front-view pixels
  double confidence = 0.0;
};

struct FramePrediction {
  std::vector<LanePrediction> lanes;
  std::vector<ElementPrediction> elements;
  // lanes x lanes and lanes x elements confidences; a relation counts as predicted above 0.5.
  std::vector<std::vector<double>> topology_lclc;
  std::vector<std::vector<double>> topology_lcte;
};

// Keyed by data::Frame::key(), i.e. "split/segment_id/timestamp".
using Predictions = std::map<std::string, FramePrediction>;

}  // namespace halo::eval
