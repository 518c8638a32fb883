// Frame -> OpenLane-V2 info JSON (keys and nesting as the devkit's Frame reads them) and the
// split listing, written through io::AtomicFile.
#include "data/FrameWriter.h"

#include <fstream>

#include <fmt/format.h>

#include "data/FrameReader.h"
#include "io/AtomicFile.h"
#include "util/Error.h"

namespace halo::data {

namespace fs = std::filesystem;
using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

ojson mat(const Mat3& m) {
  return {{m[0][0], m[0][1], m[0][2]}, {m[1][0], m[1][1], m[1][2]}, {m[2][0], m[2][1], m[2][2]}};
}
ojson vec(const Vec3& v) { return {v[0], v[1], v[2]}; }

ojson annotation_json(const Annotation& a) {
  ojson lanes = ojson::array();
  for (const auto& l : a.lanes) {
    ojson pts = ojson::array();
    for (const auto& p : l.points) pts.push_back(vec(p));
    lanes.push_back({{"id", l.id}, {"points", pts}, {"is_intersection_or_connector", l.is_intersection_or_connector}});
  }
  ojson tes = ojson::array();
  for (const auto& t : a.elements)
    tes.push_back({{"id", t.id},
                   {"category", t.category},
                   {"attribute", t.attribute},
                   {"points", {{t.box[0], t.box[1]}, {t.box[2], t.box[3]}}}});
  return {{"lane_centerline", lanes},
          {"traffic_element", tes},
          {"topology_lclc", a.topology_lclc},
          {"topology_lcte", a.topology_lcte}};
}

}  // namespace

ojson frame_to_json(const Frame& f) {
  ojson sensor = ojson::object();
  for (const auto& c : f.cameras) {
    ojson cam = {{"image_path", c.image_path},
                 {"extrinsic", {{"rotation", mat(c.rotation)}, {"translation", vec(c.translation)}}},
                 {"intrinsic", {{"K", mat(c.K)}, {"distortion", c.distortion}}}};
    if (standard_image_size(c.name) != std::pair<int64_t, int64_t>{c.width, c.height})
      cam["image_size"] = {c.width, c.height};
    sensor[c.name] = cam;
  }
  ojson j = {{"version", f.version},
             {"segment_id", f.segment_id},
             {"meta_data", f.meta_json.empty() ? ojson::object() : ojson::parse(f.meta_json)},
             {"timestamp", f.timestamp},
             {"sensor", sensor},
             {"pose", {{"rotation", mat(f.pose.rotation)}, {"translation", vec(f.pose.translation)}}}};
  if (f.annotation) j["annotation"] = annotation_json(*f.annotation);
  return j;
}

void write_file_atomic(const fs::path& path, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    throw util::Error(fmt::format("{}: cannot create the folder ({})", path.parent_path().string(), ec.message()),
                      "choose an output folder you can write to");
  io::AtomicFile out(path.string());
  out.write(bytes.data(), bytes.size());
  out.commit();
}

void write_frame(const fs::path& root, const Frame& f) {
  write_file_atomic(frame_json_path(root, {f.split, f.segment_id, f.timestamp}), frame_to_json(f).dump());
}

void write_split_file(const fs::path& path, const std::string& split,
                      const std::map<std::string, std::vector<std::string>>& by_segment) {
  json doc = json::object();
  if (fs::exists(path)) {
    std::ifstream in(path);
    doc = json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
      throw util::Error(fmt::format("{}: exists and is not a split file (a JSON object)", path.string()),
                        "remove it or write the data to another folder");
  }
  json segs = json::object();
  for (const auto& [seg, stamps] : by_segment) {
    json list = json::array();
    for (const auto& ts : stamps) list.push_back(ts + ".json");
    segs[seg] = list;
  }
  doc[split] = segs;
  write_file_atomic(path, doc.dump(2));
}

}  // namespace halo::data
