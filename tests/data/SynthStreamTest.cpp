// In-memory synthetic frames (SynthStream) against the files `halo data synth` writes for the
// same seed and scale: the same labels and projections, close images; stripes; view counts.
#include <filesystem>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/FrameReader.h"
#include "data/FrameSample.h"
#include "data/SynthGenerator.h"
#include "data/SynthRenderer.h"
#include "data/SynthStream.h"
#include "launch/RunHelpers.h"

namespace halo::data {
namespace {

namespace fs = std::filesystem;

LoaderOptions input(int64_t height, int64_t width, uint64_t seed) {
  LoaderOptions o;
  o.height = height;
  o.width = width;
  o.seed = seed;
  return o;
}

void expect_same_targets(const FrameTargets& a, const FrameTargets& b) {
  EXPECT_TRUE(torch::equal(a.lane_points, b.lane_points));
  EXPECT_TRUE(torch::equal(a.te_boxes, b.te_boxes));
  EXPECT_TRUE(torch::equal(a.te_attributes, b.te_attributes));
  EXPECT_TRUE(torch::equal(a.topology_lclc, b.topology_lclc));
  EXPECT_TRUE(torch::equal(a.topology_lcte, b.topology_lcte));
}

TEST(SynthStream, ViewCountsMapToTheGeneratorsRigs) {
  const auto a = SynthStream::views_for(7), b = SynthStream::views_for(6), three = SynthStream::views_for(3);
  ASSERT_TRUE(a && b && three);
  EXPECT_EQ(a->subset, 'A');
  EXPECT_EQ(a->cameras, standard_camera_order("ring_front_center"));
  EXPECT_EQ(b->subset, 'B');
  EXPECT_EQ(b->cameras, standard_camera_order("CAM_FRONT"));
  EXPECT_EQ(three->subset, 'A');
  EXPECT_EQ(three->cameras, (std::vector<std::string>{"ring_front_center", "ring_front_left", "ring_front_right"}));
  EXPECT_FALSE(SynthStream::views_for(0));
  EXPECT_FALSE(SynthStream::views_for(8));
}

// Writes 3 frames of segment 0 as `halo data synth --subset S --image-scale 0.1 --seed 11`
// would and reads them back: each frame's JSON and its sample through the pipeline.
struct Written {
  Frame frame;
  FrameSample sample;
};
std::vector<Written> written(const SynthStream& stream, const std::string& tag) {
  const fs::path root = testing::fresh_dir(tag);
  SynthOptions w;
  w.out = root;
  w.subset = stream.subset();
  w.frames = 3;
  w.seed = 11;
  w.image_scale = 0.1;
  generate_synthetic(w);
  LoaderOptions disk = stream.options();
  disk.root = root;
  std::vector<Written> out;
  for (const FrameRef& ref : list_frames(root, "train"))
    out.push_back({read_frame(root, ref), load_frame_sample(disk, ref)});
  fs::remove_all(root);
  return out;
}

double mean_abs(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().mean().item<double>(); }

// Same frames, labels and projections; `tolerance` on the images' mean difference.
void expect_written_frames(const SynthStream& stream, const std::vector<Written>& files, double tolerance) {
  ASSERT_EQ(files.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const FrameSample mem = stream.sample(static_cast<int64_t>(i));
    const FrameSample &file = files[i].sample, &next = files[(i + 1) % 3].sample;
    EXPECT_EQ(mem.key, file.key);
    EXPECT_EQ(mem.images.sizes(), file.images.sizes());
    EXPECT_TRUE(torch::equal(mem.lidar2img, file.lidar2img));
    EXPECT_TRUE(torch::equal(mem.image_hw, file.image_hw));
    ASSERT_TRUE(mem.has_targets && file.has_targets);
    EXPECT_GT(mem.targets.lane_points.size(0), 0);
    expect_same_targets(mem.targets, file.targets);
    const double diff = mean_abs(mem.images, file.images), other = mean_abs(mem.images, next.images);
    std::printf("frame %zu: mean |memory - file| %.4f (the next frame's file: %.4f)\n", i, diff, other);
    EXPECT_LT(diff, tolerance);
    EXPECT_GT(mem.images.std().item<double>(), 0.3);  // a scene, not a blank image
  }
}

TEST(SynthStream, AtTheFilesImageSizeFramesAreTheWrittenFramesUpToJpeg) {
  // Subset B at 0.1 is 160 x 90 per view: the pipeline's resize is the identity for both.
  const SynthStream stream(input(90, 160, 11), *SynthStream::views_for(6), 0.1);
  const std::vector<Written> files = written(stream, "synth-stream-b");
  expect_written_frames(stream, files, 0.04);  // measured 0.027-0.029: JPEG quality 92
  for (size_t i = 0; i < files.size(); ++i) {  // without the JPEG round trip: the very same tensors
    const Frame& f = files[i].frame;
    const FrameSample direct = make_frame_sample(
        stream.options(), f, [&](size_t c) { return render_view(f, *f.annotation, c); }, f.key());
    EXPECT_TRUE(torch::equal(direct.images, stream.sample(static_cast<int64_t>(i)).images)) << f.key();
  }
}

TEST(SynthStream, AtAnotherSizeFramesAreTheWrittenFramesRenderedAtThatSize) {
  // Subset A: the portrait front view and the landscape ones all stretched to 96 x 160; the
  // files' images are resized by the pipeline, the stream renders at 96 x 160 directly.
  const SynthStream stream(input(96, 160, 11), *SynthStream::views_for(7), 0.1);
  expect_written_frames(stream, written(stream, "synth-stream-a"), 0.05);  // measured 0.033-0.035
}

TEST(SynthStream, SamplesArePureFunctionsOfTheirIndexAndStripesAreColumns) {
  const LoaderOptions full = input(64, 128, 5);
  const SynthStream stream(full, *SynthStream::views_for(3));
  const FrameBatch a = stream.batch(6, 3), b = stream.batch(6, 3);
  EXPECT_EQ(a.images.sizes(), (std::vector<int64_t>{3, 3, 3, 64, 128}));
  EXPECT_TRUE(torch::equal(a.images, b.images));
  EXPECT_EQ(a.keys, b.keys);
  EXPECT_TRUE(torch::equal(a.images[2], stream.sample(8).images));
  EXPECT_EQ(a.targets.size(), 3u);
  EXPECT_NE(a.keys[1], a.keys[2]);  // sample 7 ends segment 0, sample 8 starts segment 1
  EXPECT_NE(a.keys[1].substr(0, 12), a.keys[2].substr(0, 12));
  LoaderOptions right = full;
  right.stripe_begin = 64;
  right.stripe_end = 128;
  const FrameBatch s = SynthStream(right, *SynthStream::views_for(3)).batch(6, 3);
  EXPECT_EQ(s.full_width, 128);
  EXPECT_EQ(s.stripe_begin, 64);
  EXPECT_TRUE(torch::equal(s.images, a.images.slice(4, 64, 128)));
  EXPECT_TRUE(torch::equal(s.lidar2img, a.lidar2img));
  for (size_t i = 0; i < 3; ++i) expect_same_targets(s.targets[i], a.targets[i]);
}

}  // namespace
}  // namespace halo::data
