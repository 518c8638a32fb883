// The weight gradient of a depthwise convolution (one filter per channel) on channels-last
// CPU tensors, summed directly: LibTorch 2.11's oneDNN kernel takes ten times the forward.
#pragma once

#include <optional>

#include <ATen/core/Tensor.h>

namespace halo::parallel {

// Stride, padding and dilation of the conv, each (along H, along W).
struct DepthwiseGeometry {
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
};

// True where depthwise_weight_grad computes the gradient: a CPU input of 4 dims, channels-last
// contiguous, for which shard::ConvSpec::direct_depthwise_grad holds (depthwise, kernel width
// 3, 5 or 7, float, double or bfloat16 (summed in float, one sample at a time)).
bool depthwise_grad_applies(const at::Tensor& input, at::IntArrayRef weight_sizes, int64_t groups);

// grad_out (B, C, H', W') and input (B, C, H, W) of the conv; weight_sizes (C, 1, kH, kW).
// Returns d loss / d weight, (C, 1, kH, kW) contiguous in the input's dtype, or nullopt where
// depthwise_grad_applies is false (then at::convolution_backward computes it). Any layout of
// grad_out: it is made channels-last first. Split over the process's threads by channels
// (parallel::split_over_threads): the same bits for any thread count.
std::optional<at::Tensor> depthwise_weight_grad(const at::Tensor& grad_out, const at::Tensor& input,
                                                at::IntArrayRef weight_sizes, int64_t groups,
                                                const DepthwiseGeometry& geometry);

}  // namespace halo::parallel
