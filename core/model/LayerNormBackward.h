// LayerNorm's backward over the last dimension: Halo's for fp32 rows on more than one thread,
// split by blocks of rows (ATen's sums its weight gradient in per-thread rows that share cache
// lines: slower on two threads than on one at few channels), else ATen's.
#pragma once

#include <optional>
#include <tuple>

#include <ATen/core/Tensor.h>

namespace halo::model {

// Rows per block: each block sums its own weight and bias gradients, and the blocks' sums are
// added in block order, so the bits do not depend on the number of threads.
inline constexpr int64_t kLayerNormBackwardRows = 64;

// d loss / d x (..., C), d loss / d weight (C) and d loss / d bias (C) of
// y = (x - mean) * rstd * weight + bias, for grad and x (..., C) and mean and rstd (..., 1) as
// at::native_layer_norm returns them: fp32 CPU tensors in memory order. nullopt for any other
// kind of input (ATen's native_layer_norm_backward applies there).
std::optional<std::tuple<at::Tensor, at::Tensor, at::Tensor>> layer_norm_backward_rows(const at::Tensor& grad,
                                                                                       const at::Tensor& x,
                                                                                       const at::Tensor& mean,
                                                                                       const at::Tensor& rstd,
                                                                                       const at::Tensor& weight);

// d loss / d x, d loss / d weight, d loss / d bias for LayerNorm's callers: layer_norm_backward_rows
// where it applies and more than one intra-op thread runs; else at::native_layer_norm_backward
// (one thread: its buffers are what the memory planner counts).
std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_backward(const at::Tensor& grad, const at::Tensor& x,
                                                                   const at::Tensor& mean, const at::Tensor& rstd,
                                                                   const at::Tensor& weight, const at::Tensor& bias);

}  // namespace halo::model
