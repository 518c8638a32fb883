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
  // Whether Halo sums the weight gradient itself on CPU (parallel::depthwise_weight_grad) rather
  // than through oneDNN: depthwise (one filter per channel), kernel width 3, 5 or 7, fp32, fp64
  // or bf16 (summed in fp32: oneDNN's bf16 kernel keeps a scratchpad of 384+ weight copies on
  // AVX-512 CPUs).
  bool direct_depthwise_grad(int64_t in_channels, int64_t out_channels, int64_t element_bytes) const {
    const bool width = kernel[1] == 3 || kernel[1] == 5 || kernel[1] == 7;
    return groups > 1 && groups == in_channels && groups == out_channels && width &&
           (element_bytes == 2 || element_bytes == 4 || element_bytes == 8);
  }
  static ConvSpec square(int64_t k, int64_t s = 1, int64_t p = 0, int64_t d = 1, int64_t g = 1) {
    return {{k, k}, {s, s}, {p, p}, {d, d}, g};
  }
};

}  // namespace halo::shard
