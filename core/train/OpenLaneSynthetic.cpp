// Lanes are arcs on the ground (z = 0) inside the BEV range; their points are painted into
// channel 0 of every view that sees them and the element boxes into channel 1 of the front
// view, over Gaussian noise, so the labels are visible in the images.
#include "train/OpenLaneSynthetic.h"

#include <cmath>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

namespace halo::train {

OpenLaneSynthetic::OpenLaneSynthetic(int64_t views, int64_t height, int64_t width, uint64_t seed)
    : views_(views), height_(height), width_(width), seed_(seed) {}

at::Tensor OpenLaneSynthetic::camera_ring(int64_t views, int64_t height, int64_t width) {
  std::vector<at::Tensor> out;
  const double f = width / 2.0;
  at::Tensor K =
      torch::tensor({f, 0.0, width / 2.0, 0.0, 0.0, f, height / 2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0},
                    torch::kFloat64)
          .view({4, 4});
  for (int64_t v = 0; v < views; ++v) {
    const double yaw = 2 * M_PI * static_cast<double>(v) / static_cast<double>(views);
    const double c = std::cos(yaw), s = std::sin(yaw);
    // Rows: camera x (right), y (down), z (forward) in ego coordinates; camera at (0, 0, 1.5).
    at::Tensor R = torch::tensor({s, -c, 0.0, 0.0, 0.0, -1.0, c, s, 0.0}, torch::kFloat64).view({3, 3});
    at::Tensor E = torch::eye(4, torch::kFloat64);
    E.slice(0, 0, 3).slice(1, 0, 3).copy_(R);
    E.slice(0, 0, 3).select(1, 3).copy_(-torch::matmul(R, torch::tensor({0.0, 0.0, 1.5}, torch::kFloat64)));
    out.push_back(torch::matmul(K, E));
  }
  return torch::stack(out).to(torch::kFloat32);
}

namespace {

double uniform(at::Generator& g, double lo, double hi) { return lo + (hi - lo) * torch::rand({1}, g).item<double>(); }

// Adds `value` to channel `ch` of `image` (3, H, W) at the pixels the ego points (P, 3) hit.
void paint(at::Tensor& image, const at::Tensor& lidar2img, const at::Tensor& pts, int64_t ch, double value) {
  const int64_t H = image.size(1), W = image.size(2);
  at::Tensor hom = torch::cat({pts, torch::ones({pts.size(0), 1})}, 1);  // (P, 4)
  at::Tensor cam = torch::matmul(hom, lidar2img.t());                    // (P, 4)
  at::Tensor d = cam.select(1, 2);
  at::Tensor u = (cam.select(1, 0) / d.clamp_min(1e-3)).floor().to(torch::kInt64);
  at::Tensor v = (cam.select(1, 1) / d.clamp_min(1e-3)).floor().to(torch::kInt64);
  at::Tensor ok = (d > 0.5) & (u >= 0) & (u < W) & (v >= 0) & (v < H);
  image.select(0, ch).index_put_({v.masked_select(ok), u.masked_select(ok)}, torch::full({}, value, image.options()),
                                 true);
}

}  // namespace

OpenLaneSample OpenLaneSynthetic::batch(int64_t first, int64_t count) const {
  OpenLaneSample s;
  at::Tensor rig = camera_ring(views_, height_, width_);
  std::vector<at::Tensor> images;
  for (int64_t i = first; i < first + count; ++i) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed_ * 1000003ULL + static_cast<uint64_t>(i) + 77);
    at::Tensor img = 0.5 * torch::randn({views_, 3, height_, width_}, gen);
    model::OpenLaneTargets t;
    const int64_t L = torch::randint(2, 7, {1}, gen).item<int64_t>();
    std::vector<at::Tensor> lanes;
    for (int64_t l = 0; l < L; ++l) {
      const double x0 = uniform(gen, -45, 20), y0 = uniform(gen, -20, 20), th = uniform(gen, -0.4, 0.4);
      const double len = uniform(gen, 15, 30), k = uniform(gen, -0.02, 0.02);
      at::Tensor sv = torch::linspace(0, len, 11, torch::kFloat64);
      at::Tensor x = (x0 + sv * torch::cos(th + k * sv / 2)).clamp(-49.5, 49.5);
      at::Tensor y = (y0 + sv * torch::sin(th + k * sv / 2)).clamp(-24.5, 24.5);
      lanes.push_back(torch::stack({x, y, torch::zeros_like(x)}, 1).to(torch::kFloat32));                     // (11, 3)
      at::Tensor dense = torch::upsample_linear1d(lanes.back().t().unsqueeze(0), {60}, true).squeeze(0).t();  // (60, 3)
      for (int64_t v = 0; v < views_; ++v) {
        at::Tensor view = img[v];
        paint(view, rig[v], dense, 0, 2.0);
      }
    }
    t.lane_points = torch::stack(lanes);  // (L, 11, 3)
    const int64_t T = torch::randint(1, 5, {1}, gen).item<int64_t>();
    t.te_boxes = torch::stack({0.2 + 0.6 * torch::rand({T}, gen), 0.2 + 0.4 * torch::rand({T}, gen),
                               0.03 + 0.07 * torch::rand({T}, gen), 0.03 + 0.07 * torch::rand({T}, gen)},
                              1);  // (T, 4) cx, cy, w, h
    t.te_labels = torch::randint(0, 13, {T}, gen);
    auto box = t.te_boxes.accessor<float, 2>();
    for (int64_t j = 0; j < T; ++j) {
      const int64_t x1 = static_cast<int64_t>((box[j][0] - box[j][2] / 2) * width_);
      const int64_t x2 = static_cast<int64_t>((box[j][0] + box[j][2] / 2) * width_) + 1;
      const int64_t y1 = static_cast<int64_t>((box[j][1] - box[j][3] / 2) * height_);
      const int64_t y2 = static_cast<int64_t>((box[j][1] + box[j][3] / 2) * height_) + 1;
      img[0][1].slice(0, y1, y2).slice(1, x1, x2).add_(1.0 + 0.1 * static_cast<double>(t.te_labels[j].item<int64_t>()));
    }
    t.lclc = (torch::rand({L, L}, gen) < 0.2).to(torch::kFloat32) * (1 - torch::eye(L));
    t.lcte = (torch::rand({L, T}, gen) < 0.3).to(torch::kFloat32);
    images.push_back(img);
    s.targets.push_back(std::move(t));
  }
  s.images = torch::stack(images);
  s.lidar2img = rig.unsqueeze(0).expand({count, views_, 4, 4}).contiguous();
  s.image_hw = torch::tensor({height_, width_}, torch::kInt64).view({1, 1, 2}).expand({count, views_, 2}).contiguous();
  return s;
}

}  // namespace halo::train
