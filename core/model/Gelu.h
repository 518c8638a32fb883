// Exact (erf) GELU for the pointwise branch: the forward value, and a backward that also leaves
// the value, so backward computes erf once for the slope and for fc2's weight gradient.
#pragma once

#include <torch/types.h>

namespace halo::model {

// gelu(x), a new tensor; with a bias (one value of x's dtype per column of x's last dimension),
// gelu(x + bias) without forming x + bias: a Linear's bias added where GELU reads its output. fp32 CPU
// tensors in memory order take a vector loop (erf as ATen's vectorised fp32 GELU computes it),
// split over the intra-op threads; every other case is ATen's gelu (of x + bias), bit for bit.
torch::Tensor gelu(const torch::Tensor& x, const torch::Tensor& bias = {});

// In place: grad <- grad * gelu'(x), then x <- gelu(x), x read as x + bias where a bias is given
// (as gelu above); returns the new grad summed over every dimension but the last (a Linear's bias
// gradient when x is its output), in grad's dtype. x and
// grad have the same shape and do not overlap. fp32 CPU tensors in memory order take one fused
// loop (one exp shared by the value and the slope; x's new values equal gelu(x)'s to the bit; the
// sums in float over 64 rows at a time, those in double in row order), split over the intra-op
// threads by those 64-row blocks: the same bits for any thread count. Every other case adds the
// bias into x, then runs ATen's gelu_backward, gelu and sum. Both versions are bumped, so autograd refuses a second
// backward that would read the overwritten x.
torch::Tensor gelu_backward_keep_value_(torch::Tensor& grad, torch::Tensor& x, const torch::Tensor& bias = {});

}  // namespace halo::model
