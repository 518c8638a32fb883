// Width-sharded 2-D convolution: exact against the unsharded op for any kernel, stride,
// padding, dilation and groups. Halos are exchanged while the interior is computed.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

#include "parallel/ShardedTensor.h"
#include "shard/ConvSpec.h"

namespace halo::parallel {

struct ShardedConvOptions {
  bool overlap = true;  // convolve the interior while halos travel, then the borders
  std::string label;    // the layer's name: its exchange time goes to ExchangeClock (empty: not kept)
};

// x: (B, Cin, H, W/world); weight (Cout, Cin/groups, kH, kW); bias (Cout) or undefined.
// Returns (B, Cout, H', W'/world) on output_partition(x.part, spec.along_w()).
// Weight and bias gradients are this rank's partial sums (sum them over the sp group).
ShardedTensor sharded_conv2d(const ShardedTensor& x, const at::Tensor& weight, const at::Tensor& bias,
                             const shard::ConvSpec& spec, ShardedConvOptions opts = {});

// LibTorch 2.11's oneDNN corrupts the heap in the weight gradient of a strided 1x1 conv over
// channels-last input with fewer than 16 channels (jit_1x1 backward_weights; reproduced in
// plain PyTorch with a (4, 8, 32, 128) input). For such a conv sharded_conv2d convolves the
// strided pixels (x[..., ::s, ::s]) with stride 1 instead: the same sums, another kernel.
bool oneDNN_strided_pointwise_fault(const at::Tensor& x, const shard::ConvSpec& spec);

}  // namespace halo::parallel
