// The multi-view classification data of task "convnext", generated on the fly, so no run needs
// a download: each sample is V camera views whose stripes encode its class; learnable by a CNN.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace halo::train {

struct ClassificationSample {
  at::Tensor images;  // (N, V, 3, H, W)
  at::Tensor labels;  // (N) int64
};

class ClassificationData {
 public:
  ClassificationData(int64_t views, int64_t height, int64_t width, int64_t classes, uint64_t seed);
  // Samples [first, first + count) of the endless stream: a pure function of the index, so
  // every sp rank sees the same sample and a resumed run sees the same data.
  ClassificationSample batch(int64_t first, int64_t count) const;

 private:
  int64_t views_, height_, width_, classes_;
  uint64_t seed_;
};

}  // namespace halo::train
