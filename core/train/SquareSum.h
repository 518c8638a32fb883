// The sum of squares of gradients in double, for the gradient norm: on the CPU one pass over
// each tensor's memory (no fp64 copy, no squared copy); on a GPU one host copy for them all.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace halo::train {

// Sum over every element x of every tensor of double(x)^2. An fp32 element's square is exact in
// double, so only the order of the additions differs from `t.to(kDouble).pow(2).sum()`.
double square_sum(const std::vector<at::Tensor>& tensors);

}  // namespace halo::train
