// In-memory OpenLane-V2 frames and their exact predictions for the eval unit tests.
#pragma once

#include <string>

#include "data/Frame.h"
#include "eval/Predictions.h"

namespace halo::eval::testing {

// A frame "val/seg/<ts>" with `lanes` straight 201-point lanes (3.5 m apart) and `elements`
// boxes (attribute i % 13), lane i -> lane i+1 and lane i -> element i related.
inline data::Frame make_frame(const std::string& ts, int lanes, int elements) {
  data::Frame f;
  f.split = "val";
  f.segment_id = "seg";
  f.timestamp = ts;
  data::Annotation a;
  for (int i = 0; i < lanes; ++i) {
    data::LaneCenterline l;
    l.id = i;
    for (int k = 0; k < 201; ++k) l.points.push_back({-10.0 + 0.15 * k, 3.5 * i, 0.0});
    a.lanes.push_back(l);
  }
  for (int i = 0; i < elements; ++i) a.elements.push_back({100 + i, 1, i % 13, {100.0 * i, 50, 100.0 * i + 60, 120}});
  a.topology_lclc.assign(lanes, std::vector<int>(lanes, 0));
  a.topology_lcte.assign(lanes, std::vector<int>(elements, 0));
  for (int i = 0; i + 1 < lanes; ++i) a.topology_lclc[i][i + 1] = 1;
  for (int i = 0; i < lanes && i < elements; ++i) a.topology_lcte[i][i] = 1;
  f.annotation = a;
  return f;
}

inline FramePrediction exact_prediction(const data::Frame& f) {
  FramePrediction p;
  const auto& a = *f.annotation;
  double c = 0.9;
  for (const auto& l : a.lanes) p.lanes.push_back({l.id, l.points, c -= 0.01});
  for (const auto& e : a.elements) p.elements.push_back({e.id, e.attribute, e.box, c -= 0.01});
  for (const auto& row : a.topology_lclc) p.topology_lclc.emplace_back(row.begin(), row.end());
  for (const auto& row : a.topology_lcte) p.topology_lcte.emplace_back(row.begin(), row.end());
  return p;
}

}  // namespace halo::eval::testing
