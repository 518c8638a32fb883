// The synthetic generator: what it writes reads back field by field, is a deterministic
// function of the seed, and looks like OpenLane-V2 (rigs, lanes, topology, TEs in view).
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "data/FrameReader.h"
#include "data/FrameWriter.h"
#include "data/ImageFile.h"
#include "data/SynthGenerator.h"
#include "data/SynthSegment.h"
#include "launch/RunHelpers.h"

namespace halo::data {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_same_frame(const Frame& a, const Frame& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.key(), b.key());
  EXPECT_EQ(nlohmann::json::parse(a.meta_json), nlohmann::json::parse(b.meta_json));
  ASSERT_EQ(a.cameras.size(), b.cameras.size());
  for (size_t c = 0; c < a.cameras.size(); ++c) {
    const Camera &x = a.cameras[c], &y = b.cameras[c];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.image_path, y.image_path);
    EXPECT_EQ(x.width, y.width);
    EXPECT_EQ(x.height, y.height);
    EXPECT_EQ(x.K, y.K);
    EXPECT_EQ(x.distortion, y.distortion);
    EXPECT_EQ(x.rotation, y.rotation);
    EXPECT_EQ(x.translation, y.translation);
  }
  EXPECT_EQ(a.pose.rotation, b.pose.rotation);
  EXPECT_EQ(a.pose.translation, b.pose.translation);
  ASSERT_EQ(a.annotation.has_value(), b.annotation.has_value());
  if (!a.annotation) return;
  const Annotation &p = *a.annotation, &q = *b.annotation;
  ASSERT_EQ(p.lanes.size(), q.lanes.size());
  for (size_t i = 0; i < p.lanes.size(); ++i) {
    EXPECT_EQ(p.lanes[i].id, q.lanes[i].id);
    EXPECT_EQ(p.lanes[i].points, q.lanes[i].points);
    EXPECT_EQ(p.lanes[i].is_intersection_or_connector, q.lanes[i].is_intersection_or_connector);
  }
  ASSERT_EQ(p.elements.size(), q.elements.size());
  for (size_t i = 0; i < p.elements.size(); ++i) {
    EXPECT_EQ(p.elements[i].id, q.elements[i].id);
    EXPECT_EQ(p.elements[i].category, q.elements[i].category);
    EXPECT_EQ(p.elements[i].attribute, q.elements[i].attribute);
    EXPECT_EQ(p.elements[i].box, q.elements[i].box);
  }
  EXPECT_EQ(p.topology_lclc, q.topology_lclc);
  EXPECT_EQ(p.topology_lcte, q.topology_lcte);
}

SynthOptions options(const std::string& tag, char subset, uint64_t seed) {
  SynthOptions o;
  o.out = testing::fresh_dir(tag);
  o.subset = subset;
  o.segments = 2;
  o.frames = 3;
  o.seed = seed;
  o.image_scale = 0.0625;
  return o;
}

TEST(Synth, ReaderRoundTripsEveryField) {
  const SynthOptions o = options("synth-rt", 'A', 11);
  const SynthSummary s = generate_synthetic(o);
  EXPECT_EQ(s.frames, 6);
  EXPECT_EQ(s.images, 42);
  const auto refs = list_frames(o.out, "train", s.split_file);
  ASSERT_EQ(refs.size(), 6u);
  for (int seg = 0; seg < 2; ++seg) {
    const SynthSegment gen('A', 11, seg, "train", 0.0625);
    for (int f = 0; f < 3; ++f) {
      const Frame want = gen.frame(f);
      const Frame got = read_frame(o.out, {"train", want.segment_id, want.timestamp});
      expect_same_frame(want, got);
      // The devkit joins f'{root}/{image_path}'; every image is there and decodes at its size.
      for (const auto& cam : got.cameras) {
        const cv::Mat img = load_image(o.out / cam.image_path);
        EXPECT_EQ(img.cols, cam.width);
        EXPECT_EQ(img.rows, cam.height);
      }
    }
  }
  // frame_to_json(read) reproduces the file byte for byte; keys as the devkit reads them,
  // the front camera first (the devkit's camera list is the key order).
  const std::string text = slurp(frame_json_path(o.out, refs[0]));
  EXPECT_EQ(frame_to_json(read_frame(o.out, refs[0])).dump(), text);
  const auto j = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys, cams;
  for (const auto& [k, _] : j.items()) keys.push_back(k);
  for (const auto& [k, _] : j["sensor"].items()) cams.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"version", "segment_id", "meta_data", "timestamp", "sensor", "pose",
                                            "annotation"}));
  EXPECT_EQ(cams.front(), "ring_front_center");
  EXPECT_EQ(cams.size(), 7u);
  EXPECT_EQ(j["sensor"]["ring_front_center"]["intrinsic"]["K"].size(), 3u);
  EXPECT_EQ(j["annotation"]["lane_centerline"][0]["points"].size(), 201u);
  fs::remove_all(o.out);
}

TEST(Synth, DeterministicInTheSeed) {
  SynthOptions a = options("synth-a", 'B', 5), b = options("synth-b", 'B', 5), c = options("synth-c", 'B', 6);
  a.segments = b.segments = c.segments = 1;
  a.frames = b.frames = c.frames = 2;
  generate_synthetic(a);
  generate_synthetic(b);
  generate_synthetic(c);
  const auto refs = list_frames(a.out, "train");
  ASSERT_EQ(refs.size(), 2u);
  for (const auto& r : refs) {
    const auto rel = fs::path("train") / r.segment_id / "info" / (r.timestamp + ".json");
    EXPECT_EQ(slurp(fs::path(a.out) / rel), slurp(fs::path(b.out) / rel));
    EXPECT_NE(slurp(fs::path(a.out) / rel), slurp(fs::path(c.out) / rel));
    const auto img = fs::path("train") / r.segment_id / "image" / "CAM_FRONT" / (r.timestamp + ".jpg");
    EXPECT_EQ(slurp(fs::path(a.out) / img), slurp(fs::path(b.out) / img));
  }
  EXPECT_EQ(slurp(fs::path(a.out) / "data_dict_subset_B.json"), slurp(fs::path(b.out) / "data_dict_subset_B.json"));
  for (const auto* o : {&a, &b, &c}) fs::remove_all(o->out);
}

TEST(Synth, LooksLikeOpenLaneV2) {
  int64_t lanes = 0, connectors = 0, links = 0, elements = 0, lcte = 0;
  std::set<int64_t> attributes;
  for (char subset : {'A', 'B'}) {
    for (int seg = 0; seg < 4; ++seg) {
      const SynthSegment gen(subset, 3, seg, "train", 0.5);
      Pose prev{};
      for (int f = 0; f < 4; ++f) {
        const Frame fr = gen.frame(f);
        ASSERT_EQ(fr.cameras.size(), subset == 'A' ? 7u : 6u);
        EXPECT_EQ(fr.cameras[0].name, subset == 'A' ? "ring_front_center" : "CAM_FRONT");
        EXPECT_EQ(fr.cameras[0].width, subset == 'A' ? 775 : 800);
        EXPECT_EQ(fr.cameras[0].height, subset == 'A' ? 1024 : 450);
        if (f > 0) {  // the ego moves 3..6 m per 0.5 s frame
          const double d =
              std::hypot(fr.pose.translation[0] - prev.translation[0], fr.pose.translation[1] - prev.translation[1]);
          EXPECT_GT(d, 2.9);
          EXPECT_LT(d, 6.1);
        }
        prev = fr.pose;
        const Annotation& a = *fr.annotation;
        EXPECT_GE(a.lanes.size(), 4u);
        for (const auto& l : a.lanes) {
          ASSERT_EQ(l.points.size(), 201u);
          for (const auto& p : l.points) {
            EXPECT_LE(std::abs(p[0]), 50.0);
            EXPECT_LE(std::abs(p[1]), 25.0);
          }
          connectors += l.is_intersection_or_connector;
        }
        lanes += static_cast<int64_t>(a.lanes.size());
        for (size_t i = 0; i < a.lanes.size(); ++i)
          for (size_t j = 0; j < a.lanes.size(); ++j)
            if (a.topology_lclc[i][j]) {
              ++links;
              EXPECT_EQ(a.lanes[i].points.back(), a.lanes[j].points.front());
            }
        for (const auto& t : a.elements) {
          attributes.insert(t.attribute);
          EXPECT_GE(t.box[0], 0);
          EXPECT_GE(t.box[1], 0);
          EXPECT_LE(t.box[2], fr.cameras[0].width - 1);
          EXPECT_LE(t.box[3], fr.cameras[0].height - 1);
          EXPECT_TRUE(t.category == 1 ? t.attribute <= 3 : t.attribute >= 4);
        }
        elements += static_cast<int64_t>(a.elements.size());
        for (const auto& row : a.topology_lcte) {
          ASSERT_EQ(row.size(), a.elements.size());
          for (int v : row) lcte += v;
        }
      }
    }
  }
  EXPECT_GT(connectors, 0);
  EXPECT_GT(links, lanes / 2);  // pieces follow pieces, connectors leave them
  EXPECT_GT(elements, 20);
  EXPECT_GT(lcte, elements / 2);
  EXPECT_GE(attributes.size(), 8u);
}

TEST(Synth, TestSplitHasNoAnnotationAndSplitsShareTheListing) {
  SynthOptions o = options("synth-test", 'A', 2);
  o.segments = 1;
  o.frames = 1;
  generate_synthetic(o);
  o.split = "test";
  generate_synthetic(o);
  const auto train = list_frames(o.out, "train", fs::path(o.out) / "data_dict_subset_A.json");
  const auto test = list_frames(o.out, "test", fs::path(o.out) / "data_dict_subset_A.json");
  ASSERT_EQ(train.size(), 1u);
  ASSERT_EQ(test.size(), 1u);
  EXPECT_TRUE(read_frame(o.out, train[0]).annotation.has_value());
  EXPECT_FALSE(read_frame(o.out, test[0]).annotation.has_value());
  EXPECT_NE(train[0].segment_id, test[0].segment_id);
  fs::remove_all(o.out);
}

}  // namespace
}  // namespace halo::data
