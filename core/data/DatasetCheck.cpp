// Validates each frame through read_frame and each image through load_image (its size against
// the camera's), and that traffic-element boxes lie inside the front view.
#include "data/DatasetCheck.h"

#include <fmt/format.h>

#include "data/FrameReader.h"
#include "data/ImageFile.h"
#include "util/Error.h"

namespace halo::data {

int64_t DatasetReport::problem_count() const {
  int64_t n = 0;
  for (const auto& s : segments) n += static_cast<int64_t>(s.problems.size());
  return n;
}

namespace {

void check_frame(const std::filesystem::path& root, const FrameRef& ref, SegmentReport& seg) {
  Frame f;
  try {
    f = read_frame(root, ref);
  } catch (const util::Error& e) {
    seg.problems.push_back(e.problem());
    return;
  }
  for (const auto& cam : f.cameras) {
    const auto path = root / cam.image_path;
    try {
      const cv::Mat img = load_image(path);
      ++seg.images;
      if (cam.width > 0 && (img.cols != cam.width || img.rows != cam.height))
        seg.problems.push_back(fmt::format("{}: is {}x{}, but camera {} is {}x{}", path.string(), img.cols, img.rows,
                                           cam.name, cam.width, cam.height));
    } catch (const util::Error& e) {
      seg.problems.push_back(e.problem());
    }
  }
  if (!f.annotation) return;
  ++seg.annotated;
  seg.lanes += static_cast<int64_t>(f.annotation->lanes.size());
  seg.elements += static_cast<int64_t>(f.annotation->elements.size());
  const Camera& front = f.cameras.front();
  for (size_t i = 0; i < f.annotation->elements.size(); ++i) {
    const auto& b = f.annotation->elements[i].box;
    const bool ordered = b[0] <= b[2] && b[1] <= b[3];
    const bool inside =
        front.width == 0 || (b[0] >= -1 && b[1] >= -1 && b[2] <= front.width + 1 && b[3] <= front.height + 1);
    if (!ordered || !inside)
      seg.problems.push_back(
          fmt::format("{}: annotation.traffic_element[{}].points [[{}, {}], [{}, {}]] {} the {}x{} front view",
                      frame_json_path(root, ref).string(), i, b[0], b[1], b[2], b[3],
                      ordered ? "lie outside" : "are not top-left, bottom-right in", front.width, front.height));
  }
}

}  // namespace

DatasetReport check_dataset(const std::filesystem::path& root, const std::string& split,
                            const std::filesystem::path& split_file,
                            const std::function<void(int64_t, int64_t)>& progress) {
  DatasetReport report;
  report.split = split;
  const auto refs = list_frames(root, split, split_file);
  int64_t done = 0;
  for (const auto& ref : refs) {
    if (report.segments.empty() || report.segments.back().segment_id != ref.segment_id)
      report.segments.push_back({ref.segment_id});
    SegmentReport& seg = report.segments.back();
    ++seg.frames;
    check_frame(root, ref, seg);
    if (progress) progress(++done, static_cast<int64_t>(refs.size()));
  }
  return report;
}

}  // namespace halo::data
