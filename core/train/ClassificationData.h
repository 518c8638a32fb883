// The multi-view classification data of task "convnext", generated on the fly, so no run needs
// a download: each sample is V camera views whose stripes encode its class; learnable by a CNN.
#pragma once

#include <cstdint>
#include <optional>

#include <ATen/core/Tensor.h>

namespace halo::train {

struct ClassificationSample {
  at::Tensor images;  // (N, V, 3, H, W), or (N, V, 3, H, columns) of a column range; maybe channels-last
  at::Tensor labels;  // (N) int64
};

class ClassificationData {
 public:
  // Noise is drawn per block of this many columns, each from a generator of its own, so that a
  // range of columns costs only its blocks.
  static constexpr int64_t kNoiseBlock = 16;

  ClassificationData(int64_t views, int64_t height, int64_t width, int64_t classes, uint64_t seed);
  // Samples [first, first + count) of the endless stream: a pure function of the index, so
  // every sp rank sees the same sample and a resumed run sees the same data. columns
  // [begin, end) (default: all): only those columns, equal to them in the whole sample, so an sp
  // rank generates its own stripe only. channels_last: the same values in channels-last memory
  // ((N, V, H, columns, 3) underneath), which a CPU stem conv reads in place.
  ClassificationSample batch(int64_t first, int64_t count,
                             std::optional<std::pair<int64_t, int64_t>> columns = std::nullopt,
                             bool channels_last = false) const;

 private:
  int64_t views_, height_, width_, classes_;
  uint64_t seed_;
};

}  // namespace halo::train
