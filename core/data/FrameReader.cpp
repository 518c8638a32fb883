// OpenLane-V2 info JSON -> Frame, checking every field it reads (type, shape, range,
// finiteness), and the listing of a split from a data_dict file or a folder scan.
#include "data/FrameReader.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::data {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kSubsetA = {"ring_front_center", "ring_front_left", "ring_front_right", "ring_rear_left",
                                           "ring_rear_right",   "ring_side_left",  "ring_side_right"};
const std::vector<std::string> kSubsetB = {"CAM_FRONT", "CAM_FRONT_LEFT", "CAM_FRONT_RIGHT",
                                           "CAM_BACK",  "CAM_BACK_LEFT",  "CAM_BACK_RIGHT"};

// A position in the JSON document ("annotation.lane_centerline[3].points[17][2]") for messages.
class Field {
 public:
  Field(const std::string& source, const json& value, std::string path)
      : source_(source), value_(value), path_(std::move(path)) {}

  const json& value() const { return value_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& problem, const std::string& hint = {}) const {
    throw util::Error(fmt::format("{}: {} {}", source_, path_.empty() ? "<document>" : path_, problem),
                      hint.empty() ? "regenerate the file, or fix it by hand to the OpenLane-V2 format" : hint);
  }
  bool has(const char* key) const { return value_.is_object() && value_.contains(key); }
  Field operator[](const char* key) const {
    if (!value_.is_object()) fail(fmt::format("is {}, expected an object", value_.type_name()));
    auto it = value_.find(key);
    if (it == value_.end())
      throw util::Error(fmt::format("{}: {} is missing", source_, join(key)),
                        "every frame needs it; regenerate the file or add the field");
    return Field(source_, *it, join(key));
  }
  Field at(size_t i) const { return Field(source_, value_.at(i), fmt::format("{}[{}]", path_, i)); }
  size_t array(std::optional<size_t> expected_size = std::nullopt) const {
    if (!value_.is_array()) fail(fmt::format("is {}, expected an array", value_.type_name()));
    if (expected_size && value_.size() != *expected_size)
      fail(fmt::format("has {} entries, expected {}", value_.size(), *expected_size));
    return value_.size();
  }
  double number() const {
    if (!value_.is_number()) fail(fmt::format("is {}, expected a number", value_.type_name()));
    const double v = value_.get<double>();
    if (std::isnan(v)) fail("is NaN");
    if (!std::isfinite(v)) fail("is infinite");
    return v;
  }
  int64_t integer() const {
    if (value_.is_number_integer()) return value_.get<int64_t>();
    if (value_.is_number_float()) {
      const double v = number();
      if (v == std::floor(v) && std::abs(v) < 9e15) return static_cast<int64_t>(v);
    }
    fail(fmt::format("is {}, expected an integer", value_.is_number() ? value_.dump() : value_.type_name()));
  }
  std::string text() const {
    if (!value_.is_string()) fail(fmt::format("is {}, expected a string", value_.type_name()));
    return value_.get<std::string>();
  }
  bool boolean() const {
    if (value_.is_boolean()) return value_.get<bool>();
    if (value_.is_number_integer() && (value_ == 0 || value_ == 1)) return value_ == 1;
    fail(fmt::format("is {}, expected true/false", value_.dump()));
  }
  Vec3 vec3() const {
    array(3);
    return {at(0).number(), at(1).number(), at(2).number()};
  }
  Mat3 mat3() const {
    array(3);
    Mat3 m;
    for (size_t r = 0; r < 3; ++r) m[r] = at(r).vec3();
    return m;
  }
  // An rows x cols matrix of 0/1.
  std::vector<std::vector<int>> adjacency(size_t rows, size_t cols, const char* what) const {
    if (!value_.is_array()) fail(fmt::format("is {}, expected an array", value_.type_name()));
    // An empty lane list gives [] whatever the column count (numpy of shape (0, K) dumps so).
    if (value_.size() != rows)
      fail(fmt::format("has {} rows, expected {} ({})", value_.size(), rows, what),
           "the topology matrices must match the numbers of lanes and traffic elements");
    std::vector<std::vector<int>> m(rows, std::vector<int>(cols, 0));
    for (size_t r = 0; r < rows; ++r) {
      const Field row = at(r);
      if (!row.value().is_array() || row.value().size() != cols)
        row.fail(fmt::format("has {} columns, expected {} ({})", row.value().is_array() ? row.value().size() : 0, cols,
                             what),
                 "the topology matrices must match the numbers of lanes and traffic elements");
      for (size_t c = 0; c < cols; ++c) {
        const Field e = row.at(c);
        const double v = e.number();
        if (v != 0 && v != 1) e.fail(fmt::format("is {}, expected 0 or 1", e.value().dump()));
        m[r][c] = v == 1 ? 1 : 0;
      }
    }
    return m;
  }

 private:
  std::string join(const char* key) const { return path_.empty() ? std::string(key) : path_ + "." + key; }
  const std::string& source_;
  const json& value_;
  std::string path_;
};

Camera parse_camera(const Field& f, const std::string& name) {
  Camera c;
  c.name = name;
  c.image_path = f["image_path"].text();
  const Field ex = f["extrinsic"];
  c.rotation = ex["rotation"].mat3();
  c.translation = ex["translation"].vec3();
  const Field in = f["intrinsic"];
  c.K = in["K"].mat3();
  if (c.K[0][0] <= 0 || c.K[1][1] <= 0) in["K"].fail("has a non-positive focal length");
  if (in.has("distortion")) {
    const Field d = in["distortion"];
    for (size_t i = 0, n = d.array(); i < n; ++i) c.distortion.push_back(d.at(i).number());
  }
  std::tie(c.width, c.height) = standard_image_size(name);
  if (f.has("image_size")) {  // written by the generator when it scaled the images
    const Field s = f["image_size"];
    s.array(2);
    c.width = s.at(0).integer();
    c.height = s.at(1).integer();
    if (c.width <= 0 || c.height <= 0) s.fail("must be two positive integers [width, height]");
  }
  return c;
}

int camera_rank(const std::string& name) {
  for (const auto* order : {&kSubsetA, &kSubsetB}) {
    auto it = std::find(order->begin(), order->end(), name);
    if (it != order->end()) return static_cast<int>(it - order->begin());
  }
  return 1000;
}

LaneCenterline parse_lane(const Field& f) {
  LaneCenterline l;
  l.id = f["id"].integer();
  const Field pts = f["points"];
  const size_t n = pts.array();
  if (n < 2) pts.fail(fmt::format("has {} points, expected at least 2 (201 in OpenLane-V2)", n));
  l.points.reserve(n);
  for (size_t i = 0; i < n; ++i) l.points.push_back(pts.at(i).vec3());
  if (f.has("is_intersection_or_connector"))
    l.is_intersection_or_connector = f["is_intersection_or_connector"].boolean();
  return l;
}

TrafficElement parse_element(const Field& f) {
  TrafficElement t;
  t.id = f["id"].integer();
  t.category = f["category"].integer();
  const Field a = f["attribute"];
  t.attribute = a.integer();
  if (t.attribute < 0 || t.attribute > 12) a.fail(fmt::format("is {}, expected 0..12", t.attribute));
  const Field p = f["points"];
  p.array(2);
  for (size_t i = 0; i < 2; ++i) {
    p.at(i).array(2);
    t.box[2 * i] = p.at(i).at(0).number();
    t.box[2 * i + 1] = p.at(i).at(1).number();
  }
  return t;
}

Annotation parse_annotation(const Field& f) {
  Annotation a;
  const Field lanes = f["lane_centerline"];
  for (size_t i = 0, n = lanes.array(); i < n; ++i) a.lanes.push_back(parse_lane(lanes.at(i)));
  const Field tes = f["traffic_element"];
  for (size_t i = 0, n = tes.array(); i < n; ++i) a.elements.push_back(parse_element(tes.at(i)));
  a.topology_lclc = f["topology_lclc"].adjacency(a.lanes.size(), a.lanes.size(), "lanes x lanes");
  a.topology_lcte = f["topology_lcte"].adjacency(a.lanes.size(), a.elements.size(), "lanes x traffic elements");
  return a;
}

bool timestamp_less(const std::string& a, const std::string& b) {
  const auto digits = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (digits(a) && digits(b) && a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

void sort_refs(std::vector<FrameRef>& refs) {
  std::sort(refs.begin(), refs.end(), [](const FrameRef& x, const FrameRef& y) {
    if (x.segment_id != y.segment_id) return timestamp_less(x.segment_id, y.segment_id);
    return timestamp_less(x.timestamp, y.timestamp);
  });
}

json load_json(const fs::path& path, const char* what) {
  std::ifstream in(path);
  if (!in)
    throw util::Error(fmt::format("{}: cannot open {}", path.string(), what),
                      "check the dataset root and split (see `halo data check`)");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded())
    throw util::Error(fmt::format("{}: is not valid JSON", path.string()),
                      "the file is corrupt or truncated; restore or regenerate it");
  return j;
}

}  // namespace

std::pair<int64_t, int64_t> standard_image_size(const std::string& camera) {
  if (camera == "ring_front_center") return {1550, 2048};
  if (std::find(kSubsetA.begin(), kSubsetA.end(), camera) != kSubsetA.end()) return {2048, 1550};
  if (std::find(kSubsetB.begin(), kSubsetB.end(), camera) != kSubsetB.end()) return {1600, 900};
  return {0, 0};
}

const std::vector<std::string>& standard_camera_order(const std::string& camera) {
  static const std::vector<std::string> none;
  if (std::find(kSubsetA.begin(), kSubsetA.end(), camera) != kSubsetA.end()) return kSubsetA;
  if (std::find(kSubsetB.begin(), kSubsetB.end(), camera) != kSubsetB.end()) return kSubsetB;
  return none;
}

fs::path frame_json_path(const fs::path& root, const FrameRef& ref) {
  return root / ref.split / ref.segment_id / "info" / (ref.timestamp + ".json");
}

Frame parse_frame(const json& j, const FrameRef& ref, const std::string& source) {
  const Field doc(source, j, "");
  Frame fr;
  fr.split = ref.split;
  fr.segment_id = ref.segment_id;
  fr.timestamp = ref.timestamp;
  fr.version = doc["version"].text();
  const Field seg = doc["segment_id"];
  const std::string seg_id = seg.value().is_number_integer() ? seg.value().dump() : seg.text();
  if (!ref.segment_id.empty() && seg_id != ref.segment_id)
    seg.fail(fmt::format("is '{}' but the file lies in segment '{}'", seg_id, ref.segment_id));
  const Field ts = doc["timestamp"];
  if (!ts.value().is_string() && !ts.value().is_number_integer())
    ts.fail(fmt::format("is {}, expected the frame's timestamp", ts.value().type_name()));
  fr.meta_json = doc["meta_data"].value().dump();

  const Field sensor = doc["sensor"];
  if (!sensor.value().is_object() || sensor.value().empty()) sensor.fail("must be an object with one entry per camera");
  for (const auto& [name, _] : sensor.value().items()) fr.cameras.push_back(parse_camera(sensor[name.c_str()], name));
  std::stable_sort(fr.cameras.begin(), fr.cameras.end(),
                   [](const Camera& a, const Camera& b) { return camera_rank(a.name) < camera_rank(b.name); });

  const Field pose = doc["pose"];
  fr.pose.rotation = pose["rotation"].mat3();
  fr.pose.translation = pose["translation"].vec3();
  if (doc.has("annotation") && !doc.value()["annotation"].is_null())
    fr.annotation = parse_annotation(doc["annotation"]);
  return fr;
}

Frame read_frame(const fs::path& root, const FrameRef& ref) {
  const fs::path path = frame_json_path(root, ref);
  return parse_frame(load_json(path, "the frame's info JSON"), ref, path.string());
}

std::vector<FrameRef> list_frames(const fs::path& root, const std::string& split, const fs::path& split_file) {
  std::vector<FrameRef> refs;
  if (!split_file.empty()) {
    const json j = load_json(split_file, "the split file");
    const std::string src = split_file.string();
    const Field doc(src, j, "");
    if (!doc.has(split.c_str()))
      throw util::Error(fmt::format("{}: has no split '{}'", src, split),
                        "pass a split the file lists (its top-level keys), or no split file to scan the folder");
    const Field segs = doc[split.c_str()];
    if (!segs.value().is_object()) segs.fail("must map segment ids to lists of \"<timestamp>.json\"");
    for (const auto& [seg, _] : segs.value().items()) {
      const Field list = segs[seg.c_str()];
      for (size_t i = 0, n = list.array(); i < n; ++i) {
        std::string name = list.at(i).text();
        if (name.size() > 5 && name.ends_with(".json")) name.resize(name.size() - 5);
        refs.push_back({split, seg, name});
      }
    }
  } else {
    const fs::path dir = root / split;
    if (!fs::is_directory(dir))
      throw util::Error(fmt::format("{}: no such split folder", dir.string()),
                        "check the dataset root and --split (or generate one with `halo data synth`)");
    for (const auto& seg : fs::directory_iterator(dir)) {
      const fs::path info = seg.path() / "info";
      if (!seg.is_directory() || !fs::is_directory(info)) continue;
      for (const auto& f : fs::directory_iterator(info))
        if (f.is_regular_file() && f.path().extension() == ".json")
          refs.push_back({split, seg.path().filename().string(), f.path().stem().string()});
    }
  }
  sort_refs(refs);
  return refs;
}

}  // namespace halo::data
