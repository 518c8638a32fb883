// Eight floats per vector: erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7),
// whose exp(-x^2 / 2) is also the normal density in the slope; exp by range reduction and a
// degree-7 Taylor polynomial. Tails go through the same lanes, padded with zeros; backward sums
// its gradient per column as it goes (a Linear's bias gradient). Split over threads: the forward
// by 1024-element chunks (by rows with a bias), backward by 64-row blocks.
#include "model/Gelu.h"

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "parallel/ThreadSplit.h"
#include "util/TargetClones.h"

namespace halo::model {

namespace {

typedef float F32x8 __attribute__((vector_size(32)));
typedef int32_t I32x8 __attribute__((vector_size(32)));

// exp(y) for y <= 0 into out; 0 below -87 (where it would leave the normal floats); NaN stays
// NaN. An out-parameter: no vector crosses a call, whatever the caller's instruction set.
inline __attribute__((always_inline)) void exp_nonpositive(const F32x8& y, F32x8& out) {
  const F32x8 clamped = y >= -87.0f ? y : F32x8{} - 87.0f;  // and NaN: no NaN reaches the integers
  // n = round(y / ln 2) (the argument is <= 0, so truncating y / ln 2 - 0.5 rounds it)
  const I32x8 n = __builtin_convertvector(clamped * 1.44269504088896341f - 0.5f, I32x8);
  const F32x8 nf = __builtin_convertvector(n, F32x8);
  const F32x8 r = (clamped - nf * 0.693145751953125f) - nf * 1.42860682030941723212e-6f;  // |r| <= ln2 / 2
  F32x8 p = F32x8{} + 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const I32x8 bits = (n + 127) << 23;  // 2^n, n in [-126, 0]
  F32x8 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  out = y >= -87.0f ? p * scale : (y < -87.0f ? F32x8{} : y);
}

// Phi(x) (the normal distribution, from erf) into cdf and exp(-x^2 / 2) into e.
inline __attribute__((always_inline)) void cdf_and_density(const F32x8& x, F32x8& cdf, F32x8& e) {
  const F32x8 z = (x < 0.0f ? -x : x) * 0.70710678118654752f;  // |x| / sqrt(2)
  exp_nonpositive(-(z * z), e);
  const F32x8 t = 1.0f / (1.0f + 0.3275911f * z);
  F32x8 poly = t * 1.061405429f - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  const F32x8 erf_abs = 1.0f - poly * t * e;
  cdf = 0.5f + 0.5f * (x < 0.0f ? -erf_abs : erf_abs);
}

// count (<= 8) elements: out = gelu(x) (x read as x + bias with kBias, rounded once to float);
// with kSlope also grad *= gelu'(x) = Phi(x) + x phi(x), added to 8 floats at
// sum (the lanes past count add 0). out may be x.
template <bool kSlope, bool kBias = false>
inline __attribute__((always_inline)) void gelu_lanes(const float* x, float* out, float* grad, float* sum, size_t count,
                                                      const float* bias = nullptr) {
  const size_t bytes = count * sizeof(float);
  F32x8 v{}, cdf, e;
  std::memcpy(&v, x, bytes);
  if constexpr (kBias) {
    F32x8 b{};
    std::memcpy(&b, bias, bytes);
    v += b;
  }
  cdf_and_density(v, cdf, e);
  if constexpr (kSlope) {
    F32x8 g{}, s;
    std::memcpy(&g, grad, bytes);
    g = g * (cdf + v * e * 0.39894228040143267794f);  // 0 in the lanes past count
    std::memcpy(grad, &g, bytes);
    std::memcpy(&s, sum, sizeof s);
    s += g;
    std::memcpy(sum, &s, sizeof s);
  }
  const F32x8 value = v * cdf;
  std::memcpy(out, &value, bytes);
}

// One row of cols elements, whole vectors (a constant count: plain vector loads) and then the
// tail: gelu_lanes on each (always inlined, so into each target clone of its caller). grad and sum (cols floats padded
// to 8) are read with kSlope only, bias (cols floats) with kBias only.
template <bool kSlope, bool kBias>
inline __attribute__((always_inline)) void gelu_row(const float* x, float* out, float* grad, float* sum,
                                                    const float* bias, int64_t cols) {
  int64_t j = 0;
  for (; j + 8 <= cols; j += 8)
    gelu_lanes<kSlope, kBias>(x + j, out + j, kSlope ? grad + j : nullptr, kSlope ? sum + j : nullptr, 8,
                              kBias ? bias + j : nullptr);
  if (j < cols)
    gelu_lanes<kSlope, kBias>(x + j, out + j, kSlope ? grad + j : nullptr, kSlope ? sum + j : nullptr,
                              static_cast<size_t>(cols - j), kBias ? bias + j : nullptr);
}

HALO_TARGET_CLONES_FMA void gelu_f32(const float* x, float* out, int64_t n) {
  gelu_row<false, false>(x, out, nullptr, nullptr, nullptr, n);
}

// Rows [r0, r1) of (rows, cols): out = gelu(x + bias), bias along the columns.
HALO_TARGET_CLONES_FMA void gelu_bias_rows_f32(const float* x, const float* bias, float* out, int64_t cols, int64_t r0,
                                               int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) gelu_row<false, true>(x + r * cols, out + r * cols, nullptr, nullptr, bias, cols);
}

// Rows summed in float before each block's sums go into double: 64 additions' rounding at most.
constexpr int64_t kSumRows = 64;
// Elements per part of the forward's split: a whole number of vectors.
constexpr int64_t kChunk = 1024;
// A GELU element costs about as much as this many elements of a plain copy (split_over_threads).
constexpr int64_t kElementWork = 8;

// Blocks [b0, b1) of kSumRows rows of (rows, cols) in row order, x' = x (+ bias along the
// columns where given): grad <- grad * gelu'(x'), x <- gelu(x'), and block b's column sums of the
// new grad (in float) into partials + b * padded, padded = cols rounded up to 8 floats.
template <bool kBias>
inline __attribute__((always_inline)) void gelu_pair_blocks(float* x, float* grad, const float* bias, int64_t rows,
                                                            int64_t cols, int64_t b0, int64_t b1, float* partials) {
  const int64_t padded = (cols + 7) / 8 * 8;
  for (int64_t b = b0; b < b1; ++b) {
    float* partial = partials + b * padded;
    std::fill(partial, partial + padded, 0.0f);
    for (int64_t r = b * kSumRows; r < std::min(rows, (b + 1) * kSumRows); ++r)
      gelu_row<true, kBias>(x + r * cols, x + r * cols, grad + r * cols, partial, bias, cols);
  }
}

HALO_TARGET_CLONES_FMA void gelu_pair_blocks_f32(float* x, float* grad, const float* bias, int64_t rows, int64_t cols,
                                                 int64_t b0, int64_t b1, float* partials) {
  if (bias)
    gelu_pair_blocks<true>(x, grad, bias, rows, cols, b0, b1, partials);
  else
    gelu_pair_blocks<false>(x, grad, bias, rows, cols, b0, b1, partials);
}

// The blocks' float sums into double, block after block: the same order whatever the split.
void sum_blocks(const float* partials, int64_t blocks, int64_t cols, double* sums) {
  const int64_t padded = (cols + 7) / 8 * 8;
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < cols; ++j) sums[j] += partials[b * padded + j];
}

bool plain_f32(const at::Tensor& t) {
  return t.is_cpu() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided && t.is_contiguous() &&
         !t.is_conj() && !t.is_neg();
}

// Refuses a bias that is not one value of x's dtype per column of x's last dimension.
void check_bias(const at::Tensor& bias, const at::Tensor& x, const char* where) {
  if (!bias.defined()) return;
  TORCH_CHECK(x.dim() >= 1 && bias.dim() == 1 && bias.size(0) == x.size(-1), where, ": bias ", bias.sizes(),
              " is not one value per column of x ", x.sizes());
  TORCH_CHECK(bias.scalar_type() == x.scalar_type(), where, ": bias is ", bias.scalar_type(), ", x ", x.scalar_type());
}

}  // namespace

torch::Tensor gelu(const torch::Tensor& x, const torch::Tensor& bias) {
  check_bias(bias, x, "gelu");
  if (!plain_f32(x) || (bias.defined() && !plain_f32(bias))) return at::gelu(bias.defined() ? x + bias : x);
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  const float* in = x.const_data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t n = x.numel();
  if (bias.defined() && n > 0) {
    const int64_t cols = x.size(-1);
    const float* b = bias.const_data_ptr<float>();
    parallel::split_over_threads(n / cols, cols * kElementWork,
                                 [&](int64_t r0, int64_t r1) { gelu_bias_rows_f32(in, b, o, cols, r0, r1); });
    return out;
  }
  parallel::split_over_threads((n + kChunk - 1) / kChunk, kChunk * kElementWork, [&](int64_t c0, int64_t c1) {
    const int64_t begin = c0 * kChunk, end = std::min(n, c1 * kChunk);
    if (end > begin) gelu_f32(in + begin, o + begin, end - begin);
  });
  return out;
}

torch::Tensor gelu_backward_keep_value_(torch::Tensor& grad, torch::Tensor& x, const torch::Tensor& bias) {
  TORCH_CHECK(grad.sizes() == x.sizes(), "gelu_backward_keep_value_: grad ", grad.sizes(), " and x ", x.sizes(),
              " differ in shape");
  TORCH_CHECK(grad.dim() >= 1, "gelu_backward_keep_value_: grad and x need a last dimension to sum along");
  TORCH_CHECK(at::get_overlap_status(grad, x) == at::MemOverlapStatus::No,
              "gelu_backward_keep_value_: grad and x share memory");
  check_bias(bias, x, "gelu_backward_keep_value_");
  const int64_t cols = grad.size(-1);
  if (!plain_f32(grad) || !plain_f32(x) || cols == 0 || (bias.defined() && !plain_f32(bias))) {
    if (bias.defined()) x.add_(bias);
    at::gelu_backward_out(grad, grad, x);
    at::gelu_(x);
    return grad.reshape({-1, cols}).sum(0);
  }
  const int64_t rows = grad.numel() / cols, blocks = (rows + kSumRows - 1) / kSumRows;
  const auto partials = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(blocks * ((cols + 7) / 8 * 8)));
  float *xp = x.data_ptr<float>(), *gp = grad.data_ptr<float>();
  const float* bp = bias.defined() ? bias.const_data_ptr<float>() : nullptr;
  parallel::split_over_threads(blocks, kSumRows * cols * kElementWork, [&](int64_t b0, int64_t b1) {
    gelu_pair_blocks_f32(xp, gp, bp, rows, cols, b0, b1, partials.get());
  });
  at::Tensor sums = at::zeros({cols}, grad.options().dtype(at::kDouble));
  sum_blocks(partials.get(), blocks, cols, sums.data_ptr<double>());
  x.unsafeGetTensorImpl()->bump_version();
  grad.unsafeGetTensorImpl()->bump_version();
  return sums.to(at::kFloat);
}

}  // namespace halo::model
