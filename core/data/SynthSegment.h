// One synthetic OpenLane-V2 segment: a curved multi-lane road with intersections (turn
// connectors, traffic lights, signs) that the ego drives along; yields each frame's labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/Frame.h"
#include "data/SynthRandom.h"

namespace halo::data {

class SynthSegment {
 public:
  // subset 'A' or 'B'; the segment's road, speed and rig are drawn from (seed, index).
  SynthSegment(char subset, uint64_t seed, int index, const std::string& split, double image_scale);

  // Frame `f` (0-based): cameras with image paths, pose, meta data and annotation (always
  // filled; the caller drops it for test splits).
  Frame frame(int f) const;

  const std::string& segment_id() const { return segment_id_; }

 private:
  struct Sign {  // a traffic element fixed in the road's frame
    int64_t id, category, attribute;
    double s, d, z, w, h;    // arc length, lateral offset, height of its centre (m), size (m)
    std::vector<int> lanes;  // lanes whose piece ending at the intersection it governs
    int boundary;            // piece boundary (intersection) it belongs to
  };

  Vec3 road_point(double s, double d) const;  // world point at arc length s, lateral offset d
  double heading(double s) const;
  Vec3 connector_point(int lane, int boundary, bool left, double phi) const;
  double lane_offset(int lane) const;
  bool is_intersection(int boundary) const;
  std::vector<Sign> signs_at(int boundary) const;
  double ego_s(int f) const;
  Pose pose_at(int f) const;
  std::string timestamp_at(int f) const;
  void add_lanes(const Pose& pose, double s_ego, Annotation& a) const;
  void add_elements(const Frame& frame, double s_ego, Annotation& a) const;

  char subset_;
  std::string split_, segment_id_;
  uint64_t seed_;
  int index_;
  double image_scale_;
  std::vector<Camera> rig_;
  double curvature_, heading0_, grade_, speed_, piece_length_, lane_width_, s0_;
  Vec3 origin_;
  int lanes_ = 0, ego_lane_ = 0;
};

}  // namespace halo::data
