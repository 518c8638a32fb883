// Drives SynthSegment and the renderer over every segment and frame, writing JSON and
// JPEGs atomically in the dataset's layout, then the split file.
#include "data/SynthGenerator.h"

#include <map>
#include <vector>

#include <fmt/format.h>
#include <opencv2/imgcodecs.hpp>

#include "data/FrameWriter.h"
#include "data/SynthRenderer.h"
#include "data/SynthSegment.h"
#include "util/Error.h"

namespace halo::data {

std::string split_file_name(char subset) { return fmt::format("data_dict_subset_{}.json", subset); }

void validate(const SynthOptions& o) {
  if (o.subset != 'A' && o.subset != 'B')
    throw util::Error(fmt::format("--subset {} is not a subset", o.subset), "use A (7 cameras) or B (6 cameras)");
  if (o.segments < 1 || o.segments > 9999)
    throw util::Error(fmt::format("--segments {} is out of range", o.segments), "use 1..9999");
  if (o.frames < 1 || o.frames > 100000)
    throw util::Error(fmt::format("--frames {} is out of range", o.frames), "use 1..100000 frames per segment");
  if (!(o.image_scale > 0.0 && o.image_scale <= 2.0))
    throw util::Error(fmt::format("--image-scale {} is out of range", o.image_scale), "use a scale in (0, 2]");
  if (o.split.empty() || o.split.find('/') != std::string::npos || o.split.starts_with("."))
    throw util::Error(fmt::format("--split '{}' is not a folder name", o.split), "use train, val or test");
  if (o.out.empty()) throw util::Error("no output folder", "pass --out DIR");
}

SynthSummary generate_synthetic(const SynthOptions& o, const std::function<void(int64_t, int64_t)>& progress) {
  validate(o);
  SynthSummary sum;
  std::map<std::string, std::vector<std::string>> listing;
  const int64_t total = static_cast<int64_t>(o.segments) * o.frames;
  const std::vector<int> jpeg = {cv::IMWRITE_JPEG_QUALITY, 92};
  for (int s = 0; s < o.segments; ++s) {
    const SynthSegment seg(o.subset, o.seed, s, o.split, o.image_scale);
    for (int f = 0; f < o.frames; ++f) {
      Frame frame = seg.frame(f);
      const Annotation& a = *frame.annotation;
      for (size_t c = 0; c < frame.cameras.size(); ++c) {
        std::vector<uint8_t> bytes;
        if (!cv::imencode(".jpg", render_view(frame, a, c), bytes, jpeg))
          throw util::Error(fmt::format("cannot encode the JPEG of {}", frame.cameras[c].image_path));
        write_file_atomic(o.out / frame.cameras[c].image_path, std::string(bytes.begin(), bytes.end()));
        ++sum.images;
      }
      sum.lanes += static_cast<int64_t>(a.lanes.size());
      sum.elements += static_cast<int64_t>(a.elements.size());
      if (o.split == "test") frame.annotation.reset();
      write_frame(o.out, frame);
      listing[frame.segment_id].push_back(frame.timestamp);
      ++sum.frames;
      if (progress) progress(sum.frames, total);
    }
    ++sum.segments;
  }
  sum.split_file = o.out / split_file_name(o.subset);
  write_split_file(sum.split_file, o.split, listing);
  return sum;
}

}  // namespace halo::data
