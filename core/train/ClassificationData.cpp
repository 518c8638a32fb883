// Class c sets the orientation and frequency of a sinusoidal pattern (plus per-view phase
// and per-channel gain) under Gaussian noise: easy to learn, impossible to memorise.
#include "train/ClassificationData.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>

#include "parallel/ThreadSplit.h"
#include "util/Error.h"

namespace halo::train {

namespace {

// splitmix64's finaliser: nearby (sample, view, block) triples get unrelated generator seeds.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

ClassificationData::ClassificationData(int64_t views, int64_t height, int64_t width, int64_t classes, uint64_t seed)
    : views_(views), height_(height), width_(width), classes_(classes), seed_(seed) {}

ClassificationSample ClassificationData::batch(int64_t first, int64_t count,
                                               std::optional<std::pair<int64_t, int64_t>> columns,
                                               bool channels_last) const {
  const auto [c0, c1] = columns.value_or(std::pair<int64_t, int64_t>{0, width_});
  if (c0 < 0 || c1 > width_ || c0 >= c1)
    throw util::Error(fmt::format("synthetic data: columns [{}, {}) outside an image {} wide", c0, c1, width_));
  const int64_t cols = c1 - c0;
  at::Tensor images = channels_last ? at::empty({count, views_, height_, cols, 3}).permute({0, 1, 4, 2, 3})
                                    : at::empty({count, views_, 3, height_, cols});  // (N, V, 3, H, cols)
  at::Tensor labels = at::empty({count}, at::kLong);
  const auto ys = torch::linspace(0, 1, height_).view({height_, 1});
  const auto xs = torch::linspace(0, 1, width_).view({1, width_});
  const at::Tensor gains = torch::tensor({1.0f, 0.5f, -0.5f}).view({3, 1, 1});
  // Each sample draws from generators of its own and writes only its own image: the samples
  // split over the intra-op threads with the same bits on any number of them.
  auto make = [&](int64_t i) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed_ * 1000003ULL + static_cast<uint64_t>(i));
    const int64_t label = torch::randint(classes_, {1}, gen).item<int64_t>();
    const double angle = M_PI * static_cast<double>(label) / static_cast<double>(classes_);
    const double freq = 3.0 + 2.0 * static_cast<double>(label % 3);
    // sin(u + phase) = sin u cos phase + cos u sin phase: the transcendental part over the whole
    // width (a vectorised kernel's tail may round differently), then only the wanted columns.
    const at::Tensor u = 2 * M_PI * freq * (xs * std::cos(angle) + ys * std::sin(angle));  // (H, W)
    const at::Tensor sin_u = u.sin().narrow(-1, c0, cols), cos_u = u.cos().narrow(-1, c0, cols);
    for (int64_t v = 0; v < views_; ++v) {
      const double phase = torch::rand({1}, gen).item<double>() * 2 * M_PI;
      at::Tensor img = images[i - first][v];  // (3, H, cols)
      for (int64_t b = c0 / kNoiseBlock; b * kNoiseBlock < c1; ++b) {
        const int64_t b0 = b * kNoiseBlock, bw = std::min(kNoiseBlock, width_ - b0);
        const int64_t lo = std::max(b0, c0), hi = std::min(b0 + bw, c1);
        auto block_gen = at::make_generator<at::CPUGeneratorImpl>(
            mix(mix(mix(seed_) + static_cast<uint64_t>(i)) + static_cast<uint64_t>(v * 65537 + b)));
        img.narrow(-1, lo - c0, hi - lo).copy_(torch::randn({3, height_, bw}, block_gen).narrow(-1, lo - b0, hi - lo));
      }
      const at::Tensor pattern = sin_u * std::cos(phase) + cos_u * std::sin(phase);  // (H, cols)
      img.mul_(0.5).add_(pattern.unsqueeze(0) * gains);
    }
    labels.data_ptr<int64_t>()[i - first] = label;
  };
  const int64_t per_sample = views_ * 3 * height_ * cols;
  parallel::split_over_threads(count, per_sample, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) make(first + i);
  });
  return {images, labels};
}

}  // namespace halo::train
