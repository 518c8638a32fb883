// Inverse-perspective view transform: every cell centre of a BEV grid at several heights is
// projected into every camera and bilinearly sampled from that camera's feature map.
#pragma once

#include <array>

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

namespace halo::model {

struct BevGrid {
  std::array<double, 3> x{-50.0, 50.0, 1.0};  // min, max, step (m); ego x forward
  std::array<double, 3> y{-25.0, 25.0, 1.0};  // ego y left
  std::array<double, 3> z{-3.0, 2.0, 0.5};    // height planes
  int64_t nx() const;
  int64_t ny() const;
  int64_t nz() const;
};

class IpmViewTransformImpl : public torch::nn::Module {
 public:
  IpmViewTransformImpl(int64_t channels, BevGrid grid);
  // feats (B*V, C, h, w) full width, lidar2img (B, V, 4, 4) ego -> input pixels,
  // image_hw (B, V, 2) valid input size, input_hw the padded input size -> BEV (B, C, ny, nx).
  at::Tensor forward(const at::Tensor& feats, const at::Tensor& lidar2img, const at::Tensor& image_hw,
                     std::array<int64_t, 2> input_hw);
  const BevGrid& grid() const { return grid_; }

  torch::nn::Conv2d proj{nullptr};  // (C * nz) -> C, 1x1, over the stacked height planes

 private:
  BevGrid grid_;
};
TORCH_MODULE(IpmViewTransform);

}  // namespace halo::model
