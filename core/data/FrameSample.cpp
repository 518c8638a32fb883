// Per-frame work of the pipeline (loader worker threads, or SynthStream): OpenCV resize,
// ImageNet normalisation into the stripe of a zero-padded tensor, lidar2img, labels; collation.
#include "data/FrameSample.h"

#include <algorithm>

#include <fmt/format.h>
#include <torch/torch.h>
#include <opencv2/imgproc.hpp>

#include "data/ImageFile.h"
#include "data/Polyline.h"
#include "data/Projection.h"
#include "util/Error.h"

namespace halo::data {

namespace {

constexpr float kMean[3] = {123.675f, 116.28f, 103.53f};  // ImageNet, RGB, 0..255
constexpr float kStd[3] = {58.395f, 57.12f, 57.375f};
constexpr int kLanePoints = 11;

// The frame's cameras in the requested view order.
std::vector<const Camera*> select_views(const Frame& f, const LoaderOptions& o, const std::string& source) {
  std::vector<const Camera*> out;
  if (o.views.empty()) {
    for (const auto& c : f.cameras) out.push_back(&c);
    return out;
  }
  for (const auto& name : o.views) {
    auto it = std::find_if(f.cameras.begin(), f.cameras.end(), [&](const Camera& c) { return c.name == name; });
    if (it == f.cameras.end())
      throw util::Error(fmt::format("{}: sensor.{} is missing (the view order asks for it)", source, name),
                        "list only cameras the dataset has in the experiment's data.views");
    out.push_back(&*it);
  }
  return out;
}

// Writes the normalised RGB of `img` (already network-sized, BGR u8) into columns
// [begin, end) of `out` (3, Hp, end - begin); padding columns/rows stay zero.
void normalise_into(const cv::Mat& img, at::Tensor out, int64_t begin, int64_t end) {
  float* dst = out.data_ptr<float>();
  const int64_t hp = out.size(1), ws = end - begin;
  const int64_t x1 = std::min<int64_t>(end, img.cols);
  for (int64_t y = 0; y < img.rows; ++y) {
    const auto* row = img.ptr<cv::Vec3b>(static_cast<int>(y));
    for (int64_t x = begin; x < x1; ++x)
      for (int c = 0; c < 3; ++c)
        dst[(c * hp + y) * ws + (x - begin)] = (static_cast<float>(row[x][2 - c]) - kMean[c]) / kStd[c];
  }
}

FrameTargets make_targets(const Annotation& a, const std::array<double, 4>& front) {
  FrameTargets t;
  const auto L = static_cast<int64_t>(a.lanes.size()), T = static_cast<int64_t>(a.elements.size());
  t.lane_points = torch::zeros({L, kLanePoints, 3}, torch::kFloat);  // (L, 11, 3)
  auto lp = t.lane_points.accessor<float, 3>();
  for (int64_t i = 0; i < L; ++i) {
    const auto pts = resample_polyline(a.lanes[i].points, kLanePoints);
    for (int k = 0; k < kLanePoints; ++k)
      for (int c = 0; c < 3; ++c) lp[i][k][c] = static_cast<float>(pts[k][c]);
  }
  t.te_boxes = torch::zeros({T, 4}, torch::kFloat);   // (T, 4)
  t.te_attributes = torch::zeros({T}, torch::kLong);  // (T)
  auto bx = t.te_boxes.accessor<float, 2>();
  auto at = t.te_attributes.accessor<int64_t, 1>();
  for (int64_t j = 0; j < T; ++j) {
    const auto& b = a.elements[j].box;
    bx[j][0] = static_cast<float>(front[0] * b[0] + front[1]);
    bx[j][1] = static_cast<float>(front[2] * b[1] + front[3]);
    bx[j][2] = static_cast<float>(front[0] * b[2] + front[1]);
    bx[j][3] = static_cast<float>(front[2] * b[3] + front[3]);
    at[j] = a.elements[j].attribute;
  }
  t.topology_lclc = torch::zeros({L, L}, torch::kFloat);  // (L, L)
  t.topology_lcte = torch::zeros({L, T}, torch::kFloat);  // (L, T)
  auto ll = t.topology_lclc.accessor<float, 2>();
  auto lt = t.topology_lcte.accessor<float, 2>();
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j < L; ++j) ll[i][j] = static_cast<float>(a.topology_lclc[i][j]);
    for (int64_t j = 0; j < T; ++j) lt[i][j] = static_cast<float>(a.topology_lcte[i][j]);
  }
  return t;
}

}  // namespace

std::pair<int64_t, int64_t> padded_size(const LoaderOptions& o) {
  const int64_t s = std::max<int64_t>(1, o.pad_stride);
  return {(o.height + s - 1) / s * s, (o.width + s - 1) / s * s};
}

std::array<double, 4> resize_map(int64_t width, int64_t height, const LoaderOptions& o) {
  const double sx = static_cast<double>(o.width) / width, sy = static_cast<double>(o.height) / height;
  return {sx, 0.5 * sx - 0.5, sy, 0.5 * sy - 0.5};
}

FrameSample make_frame_sample(const LoaderOptions& o, const Frame& f, const ViewImage& image,
                              const std::string& source) {
  const auto views = select_views(f, o, source);
  const auto [hp, wp] = padded_size(o);
  const int64_t begin = o.stripe_begin, end = o.stripe_end < 0 ? wp : o.stripe_end;
  const auto V = static_cast<int64_t>(views.size());
  FrameSample s;
  s.key = f.key();
  s.images = torch::zeros({V, 3, hp, end - begin}, torch::kFloat);  // (V, 3, Hp, Ws)
  s.lidar2img = torch::zeros({V, 4, 4}, torch::kFloat);             // (V, 4, 4)
  s.image_hw = torch::empty({V, 2}, torch::kLong);                  // (V, 2)
  auto l2i = s.lidar2img.accessor<float, 3>();
  auto hw = s.image_hw.accessor<int64_t, 2>();
  std::array<double, 4> front_map{};
  bool have_front = false;
  for (int64_t v = 0; v < V; ++v) {
    const Camera& cam = *views[v];
    const cv::Mat img = image(static_cast<size_t>(&cam - f.cameras.data()));
    cv::Mat resized;
    cv::resize(img, resized, cv::Size(static_cast<int>(o.width), static_cast<int>(o.height)), 0, 0, cv::INTER_LINEAR);
    normalise_into(resized, s.images[v], begin, end);
    const auto m = resize_map(img.cols, img.rows, o);
    if (&cam == &f.cameras.front()) front_map = m, have_front = true;
    Camera scaled = cam;
    for (int c = 0; c < 3; ++c) {
      scaled.K[0][c] = m[0] * cam.K[0][c] + m[1] * cam.K[2][c];
      scaled.K[1][c] = m[2] * cam.K[1][c] + m[3] * cam.K[2][c];
    }
    const Mat4 p = lidar2img(scaled);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) l2i[v][i][j] = static_cast<float>(p[i][j]);
    hw[v][0] = o.height;
    hw[v][1] = o.width;
  }
  if (f.annotation) {
    if (!have_front && !f.annotation->elements.empty())
      throw util::Error(fmt::format("{}: the view order leaves out the front view {}, where the traffic elements lie",
                                    source, f.cameras.front().name),
                        "put the front camera in data.views");
    s.has_targets = true;
    s.targets = make_targets(*f.annotation, front_map);
  }
  return s;
}

FrameSample load_frame_sample(const LoaderOptions& o, const FrameRef& ref) {
  const Frame f = read_frame(o.root, ref);
  return make_frame_sample(
      o, f, [&](size_t camera) { return load_image(o.root / f.cameras[camera].image_path); },
      frame_json_path(o.root, ref).string());
}

FrameBatch collate(std::vector<FrameSample>& samples, const LoaderOptions& o) {
  FrameBatch b;
  std::vector<at::Tensor> images, l2i, hw;
  for (auto& s : samples) {
    images.push_back(s.images);
    l2i.push_back(s.lidar2img);
    hw.push_back(s.image_hw);
    if (s.has_targets) b.targets.push_back(std::move(s.targets));
    b.keys.push_back(s.key);
  }
  if (!b.targets.empty() && b.targets.size() != samples.size())
    throw util::Error(fmt::format("split '{}' mixes annotated and unannotated frames in one batch ({})", o.split,
                                  samples.front().key),
                      "a split has annotation on every frame (train/val) or on none (test)");
  b.images = torch::stack(images);  // (B, V, 3, Hp, Ws)
  b.lidar2img = torch::stack(l2i);  // (B, V, 4, 4)
  b.image_hw = torch::stack(hw);    // (B, V, 2)
  b.full_width = padded_size(o).second;
  b.stripe_begin = o.stripe_begin;
  return b;
}

}  // namespace halo::data
