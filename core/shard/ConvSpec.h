// Geometry of a 2-D convolution or pooling: kernel, stride, padding, dilation per axis
// (H, W) and groups. The W part is what width sharding has to honour exactly.
#pragma once

#include <array>
#include <cstdint>

#include "shard/Partition.h"

namespace halo::shard {

struct ConvSpec {
  std::array<int64_t, 2> kernel{1, 1};  // (kH, kW)
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;

  Window along_w() const { return {kernel[1], stride[1], padding[1], dilation[1]}; }
  Window along_h() const { return {kernel[0], stride[0], padding[0], dilation[0]}; }
  static ConvSpec square(int64_t k, int64_t s = 1, int64_t p = 0, int64_t d = 1, int64_t g = 1) {
    return {{k, k}, {s, s}, {p, p}, {d, d}, g};
  }
};

}  // namespace halo::shard
