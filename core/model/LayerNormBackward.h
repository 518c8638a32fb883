// LayerNorm's backward over the last dimension of fp32 rows, split over the intra-op threads
// by blocks of rows (ATen's sums its weight gradient in per-thread rows that share cache lines).
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

}  // namespace halo::model
