// A cell's feature at one height is the mean over the cameras that see it (in front of the
// camera, inside its valid image); the height planes are stacked and mixed by a 1x1 conv.
#include "model/IpmViewTransform.h"

#include <cmath>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace halo::model {

namespace {
int64_t cells(const std::array<double, 3>& b) { return static_cast<int64_t>(std::llround((b[1] - b[0]) / b[2])); }
at::Tensor centres(const std::array<double, 3>& b, const at::TensorOptions& o) {
  return b[0] + (torch::arange(cells(b), o) + 0.5) * b[2];
}
// Camera geometry stays in float32 under mixed precision (pixel coordinates need the bits).
struct NoAutocast {
  explicit NoAutocast(c10::DeviceType t) : type(t), prev(at::autocast::is_autocast_enabled(t)) {
    at::autocast::set_autocast_enabled(t, false);
  }
  ~NoAutocast() { at::autocast::set_autocast_enabled(type, prev); }
  c10::DeviceType type;
  bool prev;
};

}  // namespace

int64_t BevGrid::nx() const { return cells(x); }
int64_t BevGrid::ny() const { return cells(y); }
int64_t BevGrid::nz() const { return cells(z); }

IpmViewTransformImpl::IpmViewTransformImpl(int64_t channels, BevGrid grid) : grid_(grid) {
  proj = register_module("proj", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels * grid.nz(), channels, 1)));
}

at::Tensor IpmViewTransformImpl::forward(const at::Tensor& feats, const at::Tensor& lidar2img,
                                         const at::Tensor& image_hw, std::array<int64_t, 2> input_hw) {
  const int64_t B = lidar2img.size(0), V = lidar2img.size(1), C = feats.size(1);
  const int64_t X = grid_.nx(), Y = grid_.ny(), Z = grid_.nz(), P = X * Y * Z;
  at::Tensor g, valid;  // (B*V, 1, P, 2) sampling grid, (B, V, P) visibility
  {
    NoAutocast no_autocast(feats.device().type());
    auto o = lidar2img.options().dtype(torch::kFloat32);
    auto mesh = torch::meshgrid({centres(grid_.z, o), centres(grid_.y, o), centres(grid_.x, o)}, "ij");  // (Z, Y, X)
    at::Tensor pts = torch::stack({mesh[2].flatten(), mesh[1].flatten(), mesh[0].flatten(), torch::ones({P}, o)}, 0);
    at::Tensor cam = torch::matmul(lidar2img.to(torch::kFloat32), pts);  // (B, V, 4, P)
    at::Tensor depth = cam.select(2, 2);
    at::Tensor safe = torch::where(depth > 1e-5, depth, torch::ones_like(depth));
    at::Tensor u = cam.select(2, 0) / safe, v = cam.select(2, 1) / safe;  // input pixels
    at::Tensor hw = image_hw.to(torch::kFloat32);
    valid = (depth > 1e-5) & (u >= 0) & (v >= 0) & (u < hw.select(2, 1).unsqueeze(-1)) &
            (v < hw.select(2, 0).unsqueeze(-1));
    // align_corners=False: -1 and +1 are the outer edges of the padded input.
    g = torch::stack({u / input_hw[1] * 2 - 1, v / input_hw[0] * 2 - 1}, -1);  // (B, V, P, 2)
    g = torch::where(valid.unsqueeze(-1), g, torch::full_like(g, -2.0)).view({B * V, 1, P, 2}).to(feats.scalar_type());
  }
  at::Tensor sampled = torch::grid_sampler(feats, g, 0, 0, false).view({B, V, C, P});  // bilinear, zero padding
  at::Tensor w = valid.to(feats.scalar_type()).unsqueeze(2);                           // (B, V, 1, P)
  at::Tensor bev = (sampled * w).sum(1) / w.sum(1).clamp_min(1.0);                     // (B, C, P)
  bev = bev.view({B, C, Z, Y, X}).reshape({B, C * Z, Y, X});
  return torch::relu(proj->forward(bev));  // (B, C, Y, X)
}

}  // namespace halo::model
