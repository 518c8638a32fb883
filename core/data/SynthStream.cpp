// One SynthSegment per sample (cheap: a rig and a road); its frame's cameras are mapped to the
// network input (resize_map, as the pipeline maps a decoded file) and rendered at that size.
#include "data/SynthStream.h"

#include "data/FrameReader.h"
#include "data/SynthRenderer.h"
#include "data/SynthSegment.h"

namespace halo::data {

namespace {

// The frame as a dataset of network-sized images would describe it: every camera's K maps to
// input pixels; element boxes (front view) likewise.
Frame at_input_size(Frame f, const LoaderOptions& o) {
  const auto front = resize_map(f.cameras.front().width, f.cameras.front().height, o);
  for (Camera& cam : f.cameras) {
    const auto m = resize_map(cam.width, cam.height, o);
    const Mat3 K = cam.K;
    for (int c = 0; c < 3; ++c) {
      cam.K[0][c] = m[0] * K[0][c] + m[1] * K[2][c];
      cam.K[1][c] = m[2] * K[1][c] + m[3] * K[2][c];
    }
    cam.width = o.width;
    cam.height = o.height;
  }
  for (TrafficElement& t : f.annotation->elements)
    t.box = {front[0] * t.box[0] + front[1], front[2] * t.box[1] + front[3], front[0] * t.box[2] + front[1],
             front[2] * t.box[3] + front[3]};
  return f;
}

}  // namespace

std::optional<SynthViews> SynthStream::views_for(int64_t views) {
  if (views == 6) return SynthViews{'B', standard_camera_order("CAM_FRONT")};
  const std::vector<std::string>& a = standard_camera_order("ring_front_center");
  if (views < 1 || views > static_cast<int64_t>(a.size())) return std::nullopt;
  return SynthViews{'A', std::vector<std::string>(a.begin(), a.begin() + views)};
}

SynthStream::SynthStream(LoaderOptions options, const SynthViews& views, double image_scale)
    : options_(std::move(options)), subset_(views.subset), scale_(image_scale) {
  options_.views = views.cameras;
}

FrameSample SynthStream::sample(int64_t index) const {
  const SynthSegment segment(subset_, options_.seed, static_cast<int>(index / kFramesPerSegment), "train", scale_);
  const Frame frame = at_input_size(segment.frame(static_cast<int>(index % kFramesPerSegment)), options_);
  return make_frame_sample(
      options_, frame, [&](size_t camera) { return render_view(frame, *frame.annotation, camera); }, frame.key());
}

FrameBatch SynthStream::batch(int64_t first, int64_t count) const {
  std::vector<FrameSample> samples;
  for (int64_t i = first; i < first + count; ++i) samples.push_back(sample(i));
  return collate(samples, options_);
}

}  // namespace halo::data
