// The multi-view pipeline on generated segments: batch layout, lidar2img against the pixels
// the renderer drew, stripes equal to columns of the full batch, determinism, bad files.
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/FrameReader.h"
#include "data/MultiViewLoader.h"
#include "data/SynthGenerator.h"
#include "launch/RunHelpers.h"
#include "util/Error.h"

namespace halo::data {
namespace {

namespace fs = std::filesystem;

class Loader : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(testing::fresh_dir("loader"));
    SynthOptions o;
    o.out = *root_;
    o.subset = 'A';
    o.segments = 2;
    o.frames = 3;
    o.seed = 21;
    o.image_scale = 0.25;
    generate_synthetic(o);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
  }
  static LoaderOptions opts() {
    LoaderOptions o;
    o.root = *root_;
    o.split_file = *root_ / "data_dict_subset_A.json";
    o.height = 100;
    o.width = 150;
    o.batch = 2;
    o.workers = 2;
    o.seed = 4;
    return o;
  }
  // A copy of the dataset to damage.
  static fs::path copy(const std::string& tag) {
    const fs::path d = testing::fresh_dir(tag);
    fs::copy(*root_, d, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    return d;
  }
  static fs::path* root_;
};
fs::path* Loader::root_ = nullptr;

std::vector<FrameBatch> epoch(MultiViewLoader& l, int64_t e) {
  l.start_epoch(e);
  std::vector<FrameBatch> out;
  while (auto b = l.next()) out.push_back(std::move(*b));
  return out;
}

TEST_F(Loader, BatchLayoutAndTargets) {
  MultiViewLoader l(opts());
  EXPECT_EQ(l.frames(), 6);
  EXPECT_EQ(l.batches_per_epoch(), 3);
  const auto batches = epoch(l, 0);
  ASSERT_EQ(batches.size(), 3u);
  const FrameBatch& b = batches[0];
  EXPECT_EQ(b.images.sizes(), (std::vector<int64_t>{2, 7, 3, 128, 160}));  // padded to multiples of 32
  EXPECT_EQ(b.full_width, 160);
  EXPECT_EQ(b.stripe_begin, 0);
  EXPECT_EQ(b.lidar2img.sizes(), (std::vector<int64_t>{2, 7, 4, 4}));
  EXPECT_EQ(b.image_hw[1][3][0].item<int64_t>(), 100);
  EXPECT_EQ(b.image_hw[1][3][1].item<int64_t>(), 150);
  // Padding is zero; the image is ImageNet-normalised (values around 0, not 0..255).
  EXPECT_EQ(b.images
                .index({torch::indexing::Slice(), torch::indexing::Slice(), torch::indexing::Slice(),
                        torch::indexing::Slice(100)})
                .abs()
                .max()
                .item<float>(),
            0.0f);
  EXPECT_LT(b.images.abs().max().item<float>(), 3.0f);
  ASSERT_EQ(b.targets.size(), 2u);
  ASSERT_EQ(b.keys.size(), 2u);
  // Labels against the frame's JSON: lanes resampled to 11 points evenly along the curve,
  // TE boxes mapped into the stretched front view.
  const auto key = b.keys[0];
  const auto parts = key.substr(6);
  const Frame f = read_frame(*root_, {"train", parts.substr(0, 5), parts.substr(6)});
  const FrameTargets& t = b.targets[0];
  const Annotation& a = *f.annotation;
  ASSERT_EQ(t.lane_points.size(0), static_cast<int64_t>(a.lanes.size()));
  EXPECT_EQ(t.lane_points.sizes(), (std::vector<int64_t>{static_cast<int64_t>(a.lanes.size()), 11, 3}));
  for (int64_t i = 0; i < t.lane_points.size(0); ++i) {
    const auto p = t.lane_points[i];
    EXPECT_NEAR(p[0][0].item<float>(), a.lanes[i].points.front()[0], 1e-4);
    EXPECT_NEAR(p[10][1].item<float>(), a.lanes[i].points.back()[1], 1e-4);
    const auto steps = (p.slice(0, 1) - p.slice(0, 0, 10)).norm(2, {1});  // (10)
    EXPECT_LT((steps.max() - steps.min()).item<float>(), 0.02f * steps.mean().item<float>() + 1e-3f);
  }
  ASSERT_EQ(t.te_boxes.size(0), static_cast<int64_t>(a.elements.size()));
  const double sx = 150.0 / f.cameras[0].width, sy = 100.0 / f.cameras[0].height;
  for (size_t j = 0; j < a.elements.size(); ++j) {
    EXPECT_NEAR(t.te_boxes[j][0].item<float>(), sx * (a.elements[j].box[0] + 0.5) - 0.5, 1e-3);
    EXPECT_NEAR(t.te_boxes[j][3].item<float>(), sy * (a.elements[j].box[3] + 0.5) - 0.5, 1e-3);
    EXPECT_EQ(t.te_attributes[j].item<int64_t>(), a.elements[j].attribute);
  }
  EXPECT_EQ(t.topology_lclc.sum().item<float>(), [&] {
    int n = 0;
    for (const auto& r : a.topology_lclc)
      for (int v : r) n += v;
    return static_cast<float>(n);
  }());
  EXPECT_EQ(t.topology_lcte.sizes(), (std::vector<int64_t>{t.lane_points.size(0), t.te_boxes.size(0)}));
}

// Lane points (of sample n, view v) that lidar2img puts on (within a pixel of) a
// lane-coloured pixel, out of those in view; `dy` shifts the probe down (a control).
std::pair<int, int> lane_hits(const FrameBatch& b, int64_t n, int64_t view, int dy) {
  const auto img = b.images[n][view];  // (3, Hp, Wp), normalised RGB
  const auto rgb = (img * torch::tensor({58.395f, 57.12f, 57.375f}).view({3, 1, 1}) +
                    torch::tensor({123.675f, 116.28f, 103.53f}).view({3, 1, 1}))
                       .contiguous();
  auto px = rgb.accessor<float, 3>();
  const auto m = b.lidar2img[n][view].to(torch::kDouble);
  const auto& t = b.targets[n];
  const int64_t h = b.image_hw[n][view][0].item<int64_t>(), w = b.image_hw[n][view][1].item<int64_t>();
  int hits = 0, total = 0;
  for (int64_t i = 0; i < t.lane_points.size(0); ++i)
    for (int64_t k = 0; k < 11; ++k) {
      const auto p = t.lane_points[i][k].to(torch::kDouble);
      const auto q = torch::matmul(m, torch::cat({p, torch::ones({1}, torch::kDouble)}));
      const double d = q[2].item<double>();
      if (d < 3.0) continue;
      const double u = q[0].item<double>() / d, v = q[1].item<double>() / d + dy;
      if (u < 2 || v < 2 || u > w - 3 || v > h - 3) continue;
      ++total;
      bool hit = false;
      for (int yy = -1; yy <= 1; ++yy)
        for (int xx = -1; xx <= 1; ++xx) {
          const int64_t x = std::lround(u) + xx, y = std::lround(v) + yy;
          const float r = px[0][y][x], g = px[1][y][x], bl = px[2][y][x];
          const bool white = r > 190 && g > 190 && bl > 190, yellow = r > 190 && g > 150 && bl < 90;
          hit = hit || white || yellow;
        }
      hits += hit;
    }
  return {hits, total};
}

TEST_F(Loader, Lidar2imgHitsTheDrawnLanes) {
  // ring_front_left at scale 0.25 is 512 x 388: first unresized, then halved.
  for (auto [h, w] : {std::pair<int64_t, int64_t>{388, 512}, {194, 256}}) {
    LoaderOptions o = opts();
    o.views = {"ring_front_center", "ring_front_left"};
    o.height = h, o.width = w;
    o.batch = 3, o.shuffle = false;
    MultiViewLoader l(o);
    l.start_epoch(0);
    const auto b = l.next();
    ASSERT_TRUE(b);
    for (int64_t view : {0, 1}) {
      int hits = 0, total = 0, off = 0, off_total = 0;
      for (int64_t n = 0; n < 3; ++n) {
        const auto [on_lane, in_view] = lane_hits(*b, n, view, 0);
        const auto [shifted, shifted_view] = lane_hits(*b, n, view, 12);
        hits += on_lane, total += in_view, off += shifted, off_total += shifted_view;
      }
      ASSERT_GT(total, 15) << "view " << view;
      EXPECT_GT(static_cast<double>(hits) / total, 0.9)
          << h << "x" << w << " view " << view << ": " << hits << "/" << total;
      EXPECT_LT(static_cast<double>(off) / off_total, 0.5)
          << "the check must fail off the lanes: " << off << "/" << off_total;
    }
  }
}

TEST_F(Loader, StripeEqualsColumnsOfTheFullBatch) {
  const auto full = epoch(*std::make_unique<MultiViewLoader>(opts()), 1);
  for (auto [b0, b1] : {std::pair<int64_t, int64_t>{0, 64}, {64, 160}, {32, 96}}) {
    LoaderOptions o = opts();
    o.stripe_begin = b0, o.stripe_end = b1;
    MultiViewLoader l(o);
    const auto part = epoch(l, 1);
    ASSERT_EQ(part.size(), full.size());
    for (size_t i = 0; i < part.size(); ++i) {
      EXPECT_EQ(part[i].keys, full[i].keys);
      EXPECT_EQ(part[i].stripe_begin, b0);
      EXPECT_EQ(part[i].full_width, 160);
      EXPECT_TRUE(torch::equal(part[i].images, full[i].images.slice(-1, b0, b1)));
      EXPECT_TRUE(torch::equal(part[i].lidar2img, full[i].lidar2img));
    }
  }
}

TEST_F(Loader, DeterministicOrderAndShards) {
  LoaderOptions o = opts();
  o.workers = 1;
  MultiViewLoader one(o);
  o.workers = 3;
  MultiViewLoader three(o);
  const auto a = epoch(one, 2), b = epoch(three, 2), c = epoch(three, 3);
  ASSERT_EQ(a.size(), b.size());
  std::vector<std::string> ka, kc;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].keys, b[i].keys);
    EXPECT_TRUE(torch::equal(a[i].images, b[i].images));
    EXPECT_TRUE(torch::equal(a[i].targets[1].lane_points, b[i].targets[1].lane_points));
    ka.insert(ka.end(), a[i].keys.begin(), a[i].keys.end());
    kc.insert(kc.end(), c[i].keys.begin(), c[i].keys.end());
  }
  EXPECT_NE(ka, kc);  // another epoch, another order
  EXPECT_EQ(std::set<std::string>(ka.begin(), ka.end()), std::set<std::string>(kc.begin(), kc.end()));
  // Two data-parallel shards: disjoint halves of the same epoch order.
  std::set<std::string> seen;
  for (int64_t s = 0; s < 2; ++s) {
    LoaderOptions so = opts();
    so.shard_index = s, so.shard_count = 2, so.batch = 1;
    MultiViewLoader l(so);
    for (const auto& fb : epoch(l, 2)) seen.insert(fb.keys[0]);
  }
  EXPECT_EQ(seen.size(), 6u);
}

std::string first_error(MultiViewLoader& l) {
  l.start_epoch(0);
  try {
    while (l.next()) {}
  } catch (const util::Error& e) {
    return e.problem();
  }
  return "no error";
}

TEST_F(Loader, BadFilesNameThePathOrAreSkipped) {
  const fs::path d = copy("loader-bad");
  const auto refs = list_frames(d, "train");
  const Frame f0 = read_frame(d, refs[0]);
  const fs::path bad_jpg = d / f0.cameras[2].image_path;
  std::ofstream(bad_jpg, std::ios::trunc) << "not a jpeg";
  const Frame f1 = read_frame(d, refs[1]);
  const fs::path gone = d / f1.cameras[0].image_path;
  fs::remove(gone);
  const fs::path json2 = frame_json_path(d, refs[2]);
  auto j = nlohmann::json::parse(std::ifstream(json2));
  j["annotation"]["lane_centerline"][0]["points"][5][1] = nullptr;
  std::ofstream(json2, std::ios::trunc) << j.dump();
  const fs::path json3 = frame_json_path(d, refs[3]);
  std::ofstream(json3, std::ios::trunc) << "{\"version\": \"v2";

  LoaderOptions o = opts();
  o.root = d;
  o.split_file.clear();
  o.shuffle = false;
  o.batch = 1;
  {
    MultiViewLoader l(o);
    EXPECT_EQ(first_error(l), bad_jpg.string() + ": is not a decodable image (10 bytes)");
  }
  {
    o.skip_bad = true;
    MultiViewLoader l(o);
    const auto got = epoch(l, 0);
    EXPECT_EQ(got.size(), 2u);
    EXPECT_EQ(l.skipped(), 4);
    EXPECT_EQ(got[0].keys[0], "train/" + refs[4].segment_id + "/" + refs[4].timestamp);
  }
  // Each of the other three alone, without skip_bad.
  o.skip_bad = false;
  std::ofstream(bad_jpg, std::ios::trunc | std::ios::binary)
      << std::ifstream(*root_ / f0.cameras[2].image_path, std::ios::binary).rdbuf();
  {
    MultiViewLoader l(o);
    EXPECT_EQ(first_error(l), gone.string() + ": image is missing or unreadable");
  }
  fs::copy_file(*root_ / f1.cameras[0].image_path, gone);
  {
    MultiViewLoader l(o);
    EXPECT_EQ(first_error(l),
              json2.string() + ": annotation.lane_centerline[0].points[5][1] is null, expected a number");
  }
  fs::copy_file(frame_json_path(*root_, refs[2]), json2, fs::copy_options::overwrite_existing);
  {
    MultiViewLoader l(o);
    EXPECT_EQ(first_error(l), json3.string() + ": is not valid JSON");
  }
  fs::remove_all(d);
}

TEST_F(Loader, RejectsBadOptions) {
  LoaderOptions o = opts();
  o.stripe_begin = 100, o.stripe_end = 200;
  EXPECT_THROW(MultiViewLoader{o}, util::Error);
  o = opts();
  o.views = {"ring_front_center", "CAM_FRONT"};
  MultiViewLoader l(o);
  EXPECT_NE(first_error(l).find(": sensor.CAM_FRONT is missing (the view order asks for it)"), std::string::npos);
}

}  // namespace
}  // namespace halo::data
