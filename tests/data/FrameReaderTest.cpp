// The OpenLane-V2 reader: a hand-written frame in the dataset's format parses field by field,
// and every kind of bad input fails naming the file and the field.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "data/FrameReader.h"
#include "util/Error.h"

namespace halo::data {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json camera_json(const std::string& seg, const std::string& cam, const std::string& ts) {
  return {{"image_path", "train/" + seg + "/image/" + cam + "/" + ts + ".jpg"},
          {"extrinsic", {{"rotation", {{0, 0, 1}, {-1, 0, 0}, {0, -1, 0}}}, {"translation", {1.5, 0.0, 1.6}}}},
          {"intrinsic", {{"K", {{1000, 0, 775}, {0, 1000, 1024}, {0, 0, 1}}}, {"distortion", {0.1, -0.2, 0.0}}}}};
}

json frame_json() {
  std::vector<std::vector<double>> pts;
  for (int i = 0; i < 201; ++i) pts.push_back({0.1 * i, 0.5, 0.0});
  std::vector<std::vector<double>> pts2;
  for (int i = 0; i < 201; ++i) pts2.push_back({20 + 0.1 * i, 0.5 + 0.01 * i, 0.1});
  return {{"version", "v2.1.0"},
          {"segment_id", "00007"},
          {"meta_data", {{"source", "argoverse2"}, {"source_id", "abc"}}},
          {"timestamp", "315"},
          {"sensor",
           {{"ring_side_left", camera_json("00007", "ring_side_left", "315")},
            {"ring_front_center", camera_json("00007", "ring_front_center", "315")}}},
          {"pose", {{"rotation", {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}, {"translation", {10, 20, 0.5}}}},
          {"annotation",
           {{"lane_centerline",
             {{{"id", 3}, {"points", pts}, {"is_intersection_or_connector", false}},
              {{"id", 4}, {"points", pts2}, {"is_intersection_or_connector", true}}}},
            {"traffic_element", {{{"id", 9}, {"category", 1}, {"attribute", 12}, {"points", {{10, 20}, {30, 45}}}}}},
            {"topology_lclc", {{0, 1}, {0, 0}}},
            {"topology_lcte", {{1}, {0}}}}}};
}

const FrameRef kRef{"train", "00007", "315"};

TEST(FrameReader, ParsesEveryField) {
  const Frame f = parse_frame(frame_json(), kRef, "x.json");
  EXPECT_EQ(f.version, "v2.1.0");
  EXPECT_EQ(f.key(), "train/00007/315");
  EXPECT_EQ(json::parse(f.meta_json)["source_id"], "abc");
  ASSERT_EQ(f.cameras.size(), 2u);
  EXPECT_EQ(f.cameras[0].name, "ring_front_center");  // front view first, whatever the key order
  EXPECT_EQ(f.cameras[0].width, 1550);
  EXPECT_EQ(f.cameras[0].height, 2048);
  EXPECT_EQ(f.cameras[1].width, 2048);
  EXPECT_EQ(f.cameras[0].image_path, "train/00007/image/ring_front_center/315.jpg");
  EXPECT_DOUBLE_EQ(f.cameras[0].K[1][2], 1024);
  EXPECT_DOUBLE_EQ(f.cameras[0].rotation[1][0], -1);
  EXPECT_DOUBLE_EQ(f.cameras[0].translation[2], 1.6);
  EXPECT_EQ(f.cameras[0].distortion, (std::vector<double>{0.1, -0.2, 0.0}));
  EXPECT_DOUBLE_EQ(f.pose.translation[1], 20);
  ASSERT_TRUE(f.annotation);
  const Annotation& a = *f.annotation;
  ASSERT_EQ(a.lanes.size(), 2u);
  EXPECT_EQ(a.lanes[1].id, 4);
  EXPECT_TRUE(a.lanes[1].is_intersection_or_connector);
  ASSERT_EQ(a.lanes[1].points.size(), 201u);
  EXPECT_DOUBLE_EQ(a.lanes[1].points[200][1], 0.5 + 0.01 * 200);
  ASSERT_EQ(a.elements.size(), 1u);
  EXPECT_EQ(a.elements[0].attribute, 12);
  EXPECT_EQ(a.elements[0].box, (std::array<double, 4>{10, 20, 30, 45}));
  EXPECT_EQ(a.topology_lclc, (std::vector<std::vector<int>>{{0, 1}, {0, 0}}));
  EXPECT_EQ(a.topology_lcte, (std::vector<std::vector<int>>{{1}, {0}}));
}

TEST(FrameReader, TestSplitHasNoAnnotation) {
  json j = frame_json();
  j.erase("annotation");
  EXPECT_FALSE(parse_frame(j, kRef, "x.json").annotation.has_value());
}

std::string error_of(const json& j) {
  try {
    parse_frame(j, kRef, "/d/train/00007/info/315.json");
  } catch (const util::Error& e) {
    return e.problem();
  }
  return "no error";
}

TEST(FrameReader, ErrorsNameTheFileAndTheField) {
  const std::string file = "/d/train/00007/info/315.json: ";
  json j = frame_json();
  j["annotation"]["lane_centerline"][1]["points"][17][2] = std::nan("");
  EXPECT_EQ(error_of(j), file + "annotation.lane_centerline[1].points[17][2] is NaN");
  j = frame_json();
  j["annotation"]["traffic_element"][0].erase("category");
  EXPECT_EQ(error_of(j), file + "annotation.traffic_element[0].category is missing");
  j = frame_json();
  j["annotation"]["traffic_element"][0]["attribute"] = 13;
  EXPECT_EQ(error_of(j), file + "annotation.traffic_element[0].attribute is 13, expected 0..12");
  j = frame_json();
  j["annotation"]["topology_lclc"] = {{0, 1}};
  EXPECT_EQ(error_of(j), file + "annotation.topology_lclc has 1 rows, expected 2 (lanes x lanes)");
  j = frame_json();
  j["annotation"]["topology_lcte"] = {{1, 0}, {0, 0}};
  EXPECT_EQ(error_of(j), file + "annotation.topology_lcte[0] has 2 columns, expected 1 (lanes x traffic elements)");
  j = frame_json();
  j["sensor"]["ring_front_center"]["intrinsic"]["K"][1] = "x";
  EXPECT_EQ(error_of(j), file + "sensor.ring_front_center.intrinsic.K[1] is string, expected an array");
  j = frame_json();
  j["pose"].erase("rotation");
  EXPECT_EQ(error_of(j), file + "pose.rotation is missing");
  j = frame_json();
  j["segment_id"] = "00008";
  EXPECT_EQ(error_of(j), file + "segment_id is '00008' but the file lies in segment '00007'");
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(FrameReader, ListsFromSplitFileAndScanAlike) {
  const fs::path root = fs::temp_directory_path() / ("halo-reader-" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const char* seg : {"00002", "00001"})
    for (const char* ts : {"900", "1000", "950"}) {
      json j = frame_json();
      j["segment_id"] = seg;
      write(root / "train" / seg / "info" / (std::string(ts) + ".json"), j.dump());
    }
  write(root / "data_dict_subset_A.json",
        json{{"train",
              {{"00002", {"1000.json", "900.json", "950.json"}}, {"00001", {"950.json", "900.json", "1000.json"}}}}}
            .dump());
  const auto scanned = list_frames(root, "train");
  const auto listed = list_frames(root, "train", root / "data_dict_subset_A.json");
  ASSERT_EQ(scanned.size(), 6u);
  ASSERT_EQ(listed.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(scanned[i].segment_id, listed[i].segment_id);
    EXPECT_EQ(scanned[i].timestamp, listed[i].timestamp);
  }
  EXPECT_EQ(scanned[0].segment_id, "00001");
  EXPECT_EQ(scanned[0].timestamp, "900");  // numeric order, not lexicographic
  EXPECT_EQ(scanned[2].timestamp, "1000");
  const Frame f = read_frame(root, listed[3]);
  EXPECT_EQ(f.key(), "train/00002/900");

  write(root / "train/00001/info/950.json", "{\"version\": ");
  try {
    read_frame(root, {"train", "00001", "950"});
    ADD_FAILURE() << "corrupt JSON was read";
  } catch (const util::Error& e) {
    EXPECT_EQ(e.problem(), (root / "train/00001/info/950.json").string() + ": is not valid JSON");
  }
  EXPECT_THROW(list_frames(root, "val", root / "data_dict_subset_A.json"), util::Error);
  EXPECT_THROW(list_frames(root, "val"), util::Error);
  fs::remove_all(root);
}

}  // namespace
}  // namespace halo::data
