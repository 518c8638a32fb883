// Class c sets the orientation and frequency of a sinusoidal pattern (plus per-view phase
// and per-channel gain) under Gaussian noise: easy to learn, impossible to memorise.
#include "train/ClassificationData.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

namespace halo::train {

ClassificationData::ClassificationData(int64_t views, int64_t height, int64_t width, int64_t classes, uint64_t seed)
    : views_(views), height_(height), width_(width), classes_(classes), seed_(seed) {}

ClassificationSample ClassificationData::batch(int64_t first, int64_t count) const {
  std::vector<at::Tensor> images, labels;
  const auto ys = torch::linspace(0, 1, height_).view({height_, 1});
  const auto xs = torch::linspace(0, 1, width_).view({1, width_});
  for (int64_t i = first; i < first + count; ++i) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed_ * 1000003ULL + static_cast<uint64_t>(i));
    const int64_t label = torch::randint(classes_, {1}, gen).item<int64_t>();
    const double angle = M_PI * static_cast<double>(label) / static_cast<double>(classes_);
    const double freq = 3.0 + 2.0 * static_cast<double>(label % 3);
    std::vector<at::Tensor> views;
    for (int64_t v = 0; v < views_; ++v) {
      const double phase = torch::rand({1}, gen).item<double>() * 2 * M_PI;
      at::Tensor pattern = torch::sin(2 * M_PI * freq * (xs * std::cos(angle) + ys * std::sin(angle)) + phase);
      at::Tensor gains = torch::tensor({1.0, 0.5, -0.5}).view({3, 1, 1});
      views.push_back(pattern.unsqueeze(0) * gains + 0.5 * torch::randn({3, height_, width_}, gen));
    }
    images.push_back(torch::stack(views));  // (V, 3, H, W)
    labels.push_back(torch::tensor({label}, torch::kInt64));
  }
  return {torch::stack(images).to(torch::kFloat32), torch::cat(labels)};
}

}  // namespace halo::train
