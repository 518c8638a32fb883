// Eight floats per vector: erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7),
// whose exp(-x^2 / 2) is also the normal density in the slope; exp by range reduction and a
// degree-7 Taylor polynomial. Tails go through the same lanes, padded with zeros.
#include "model/Gelu.h"

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include <algorithm>
#include <cstring>

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

// count (<= 8) elements: out = gelu(x); with kSlope also grad *= gelu'(x) = Phi(x) + x phi(x).
// out may be x.
template <bool kSlope>
inline __attribute__((always_inline)) void gelu_lanes(const float* x, float* out, float* grad, size_t count) {
  const size_t bytes = count * sizeof(float);
  F32x8 v{}, cdf, e;
  std::memcpy(&v, x, bytes);
  cdf_and_density(v, cdf, e);
  if constexpr (kSlope) {
    F32x8 g{};
    std::memcpy(&g, grad, bytes);
    g = g * (cdf + v * e * 0.39894228040143267794f);
    std::memcpy(grad, &g, bytes);
  }
  const F32x8 value = v * cdf;
  std::memcpy(out, &value, bytes);
}

template <bool kSlope>
inline __attribute__((always_inline)) void gelu_loop(const float* x, float* out, float* grad, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) gelu_lanes<kSlope>(x + i, out + i, kSlope ? grad + i : nullptr, 8);
  if (i < n) gelu_lanes<kSlope>(x + i, out + i, kSlope ? grad + i : nullptr, static_cast<size_t>(n - i));
}

HALO_TARGET_CLONES_FMA void gelu_f32(const float* x, float* out, int64_t n) { gelu_loop<false>(x, out, nullptr, n); }
HALO_TARGET_CLONES_FMA void gelu_pair_f32(float* x, float* grad, int64_t n) { gelu_loop<true>(x, x, grad, n); }

bool plain_f32(const at::Tensor& t) {
  return t.is_cpu() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided && t.is_contiguous() &&
         !t.is_conj() && !t.is_neg();
}

}  // namespace

torch::Tensor gelu(const torch::Tensor& x) {
  if (!plain_f32(x)) return at::gelu(x);
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  gelu_f32(x.const_data_ptr<float>(), out.data_ptr<float>(), x.numel());
  return out;
}

void gelu_backward_keep_value_(torch::Tensor& grad, torch::Tensor& x) {
  TORCH_CHECK(grad.sizes() == x.sizes(), "gelu_backward_keep_value_: grad ", grad.sizes(), " and x ", x.sizes(),
              " differ in shape");
  TORCH_CHECK(at::get_overlap_status(grad, x) == at::MemOverlapStatus::No,
              "gelu_backward_keep_value_: grad and x share memory");
  if (!plain_f32(grad) || !plain_f32(x)) {
    at::gelu_backward_out(grad, grad, x);
    at::gelu_(x);
    return;
  }
  gelu_pair_f32(x.data_ptr<float>(), grad.data_ptr<float>(), x.numel());
  x.unsafeGetTensorImpl()->bump_version();
  grad.unsafeGetTensorImpl()->bump_version();
}

}  // namespace halo::model
