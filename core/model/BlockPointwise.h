// A ConvNeXt block's per-pixel branch (LayerNorm, fc1, GELU, fc2, layer scale) as one autograd
// function that keeps only its input and fc1's output (parallel.recompute = cheap).
#pragma once

#include <torch/types.h>

#include "model/PointwiseKernel.h"

namespace halo::model {

// The branch's parameters as the block holds them (fp32; fc1/fc2 as (out, in) or (out, in, 1, 1)).
struct BlockPointwiseWeights {
  torch::Tensor norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias, gamma;
  double eps = 1e-6;
  PointwiseKernel kernel = PointwiseKernel::Gemm;  // fc1's and fc2's products (parallel.pointwise)
};

// y: conv_dw's output channels-last, (..., C) ((B, H, W, C) for the OneDnn kernel). Returns gamma *
// fc2(gelu(fc1(LN(y)))), (..., C), as the plain ops compute it (fp32 GEMMs: fc1's bias added as GELU reads its output,
// under autocast: LayerNorm in fp32, the Linears and GELU in the autocast dtype). Backward recomputes LayerNorm's and
// GELU's outputs and takes gamma's gradient from fc2's weight-gradient product, so fc2's output is not kept either.
// output_unread (a checkpoint's recompute, model::recompute_output_unread()): only what backward keeps is computed
// (LayerNorm and fc1); the result is zeros of the output's shape and dtype.
torch::Tensor block_pointwise(const torch::Tensor& y, const BlockPointwiseWeights& w, bool output_unread = false);

}  // namespace halo::model
