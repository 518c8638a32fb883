// The sum of squares of gradients in double, for the gradient norm: on the CPU one pass over
// each tensor's memory (no fp64 copy, no squared copy); on a GPU one host copy for them all.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace halo::train {

// Sum over every element x of every tensor of double(x)^2. An fp32 element's square is exact in
// double, so only the order of the additions differs from `t.to(kDouble).pow(2).sum()`.
// On the CPU that order is fixed, and so are the bits on every CPU kind (each square rounded,
// never fused into the addition): blocks of 4096 elements, each summed in 32 lanes (element
// i + 8k + l in lane l of vector k), the vectors added as (v0 + v1) + (v2 + v3), their 8 lanes
// in order, the blocks' sums in order, then the tail of under 32 elements one by one.
double square_sum(const std::vector<at::Tensor>& tensors);

}  // namespace halo::train
