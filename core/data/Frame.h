// One OpenLane-V2 frame as its info/<timestamp>.json describes it: cameras (image path,
// intrinsics, camera->ego extrinsics), ego->world pose and, outside test splits, annotation.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace halo::data {

using Mat3 = std::array<std::array<double, 3>, 3>;
using Vec3 = std::array<double, 3>;

struct Camera {
  std::string name;        // e.g. "ring_front_center"
  std::string image_path;  // as written in the JSON, relative to the dataset root
  int64_t width = 0, height = 0;
  Mat3 K{};  // intrinsic matrix
  std::vector<double> distortion;
  Mat3 rotation{};     // camera -> ego rotation
  Vec3 translation{};  // camera -> ego translation (m); ego frame: x forward, y left, z up
};

struct LaneCenterline {
  int64_t id = 0;
  std::vector<Vec3> points;  // 201 x 3 in ego frame (m)
  bool is_intersection_or_connector = false;
};

struct TrafficElement {
  int64_t id = 0;
  int64_t category = 0;
  int64_t attribute = 0;        // 0..12
  std::array<double, 4> box{};  // x1, y1, x2, y2 in front-view pixels
};

struct Annotation {
  std::vector<LaneCenterline> lanes;
  std::vector<TrafficElement> elements;
  std::vector<std::vector<int>> topology_lclc;  // lanes x lanes, 0/1
  std::vector<std::vector<int>> topology_lcte;  // lanes x elements, 0/1
};

struct Pose {
  Mat3 rotation{};  // ego -> world
  Vec3 translation{};
};

struct Frame {
  std::string version;
  std::string split;  // "train", "val", "test"
  std::string segment_id;
  std::string timestamp;        // as in the file name, without ".json"
  std::string meta_json;        // meta_data, kept verbatim
  std::vector<Camera> cameras;  // front view first
  Pose pose;
  std::optional<Annotation> annotation;  // absent in test splits
  // The key the devkit's prediction dict uses: "split/segment_id/timestamp".
  std::string key() const { return split + "/" + segment_id + "/" + timestamp; }
};

}  // namespace halo::data
