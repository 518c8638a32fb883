// Per row: xhat = (x - mean) * rstd, d x = rstd * (g * w - mean_c(g * w) - xhat * mean_c(g * w * xhat));
// per block of rows the sums of g * xhat and g per column, added in block order at the end.
#include "model/LayerNormBackward.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstring>

#include "parallel/ThreadSplit.h"
#include "util/TargetClones.h"

// The vector helpers are always inlined into the one cloned caller (see Gelu.cpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace halo::model {

namespace {

typedef float F32x8 __attribute__((vector_size(32)));

inline __attribute__((always_inline)) F32x8 load8(const float* p) {
  F32x8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline __attribute__((always_inline)) void store8(float* p, const F32x8& v) { std::memcpy(p, &v, sizeof v); }

struct Rows {
  const float *grad, *x, *mean, *rstd, *weight;
  float* dx;
  int64_t cols;
};

// Rows [r0, r1): d x, and the block's column sums of g * xhat (into dw) and g (into db).
HALO_TARGET_CLONES void block_f32(const Rows& a, int64_t r0, int64_t r1, float* dw, float* db) {
  const int64_t C = a.cols, vec_end = C - C % 8;
  std::memset(dw, 0, static_cast<size_t>(C) * sizeof(float));
  std::memset(db, 0, static_cast<size_t>(C) * sizeof(float));
  for (int64_t r = r0; r < r1; ++r) {
    const float *g = a.grad + r * C, *x = a.x + r * C, *w = a.weight;
    const float m = a.mean[r], s = a.rstd[r];
    F32x8 sum_gw{}, sum_gwx{};
    for (int64_t c = 0; c < vec_end; c += 8) {
      const F32x8 gc = load8(g + c), xh = (load8(x + c) - m) * s, gw = gc * load8(w + c);
      sum_gw += gw;
      sum_gwx += gw * xh;
      store8(dw + c, load8(dw + c) + gc * xh);
      store8(db + c, load8(db + c) + gc);
    }
    float t_gw = 0, t_gwx = 0;
    for (int64_t c = vec_end; c < C; ++c) {
      const float xh = (x[c] - m) * s, gw = g[c] * w[c];
      t_gw += gw;
      t_gwx += gw * xh;
      dw[c] += g[c] * xh;
      db[c] += g[c];
    }
    for (int k = 0; k < 8; ++k) {
      t_gw += sum_gw[k];
      t_gwx += sum_gwx[k];
    }
    const float k1 = t_gw / static_cast<float>(C), k2 = t_gwx / static_cast<float>(C);
    float* dx = a.dx + r * C;
    for (int64_t c = 0; c < vec_end; c += 8) {
      const F32x8 xh = (load8(x + c) - m) * s;
      store8(dx + c, s * (load8(g + c) * load8(w + c) - k1 - xh * k2));
    }
    for (int64_t c = vec_end; c < C; ++c) dx[c] = s * (g[c] * w[c] - k1 - (x[c] - m) * s * k2);
  }
}

bool applies(const at::Tensor& t) {
  return t.defined() && t.is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous();
}

}  // namespace

std::optional<std::tuple<at::Tensor, at::Tensor, at::Tensor>> layer_norm_backward_rows(const at::Tensor& grad,
                                                                                       const at::Tensor& x,
                                                                                       const at::Tensor& mean,
                                                                                       const at::Tensor& rstd,
                                                                                       const at::Tensor& weight) {
  if (!applies(grad) || !applies(x) || !applies(mean) || !applies(rstd) || !applies(weight) || x.dim() < 1)
    return std::nullopt;
  const int64_t C = x.size(-1), P = C > 0 ? x.numel() / C : 0;
  if (C == 0 || grad.sizes() != x.sizes() || weight.numel() != C || mean.numel() != P || rstd.numel() != P)
    return std::nullopt;
  at::Tensor dx = at::empty(x.sizes(), x.options());  // (..., C)
  const int64_t blocks = (P + kLayerNormBackwardRows - 1) / kLayerNormBackwardRows;
  at::Tensor sums = at::empty({blocks, 2, C}, x.options());  // per block: g * xhat, g
  const Rows rows{grad.const_data_ptr<float>(),
                  x.const_data_ptr<float>(),
                  mean.const_data_ptr<float>(),
                  rstd.const_data_ptr<float>(),
                  weight.const_data_ptr<float>(),
                  dx.data_ptr<float>(),
                  C};
  float* s = sums.data_ptr<float>();
  parallel::split_over_threads(blocks, kLayerNormBackwardRows * C, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      block_f32(rows, b * kLayerNormBackwardRows, std::min(P, (b + 1) * kLayerNormBackwardRows), s + b * 2 * C,
                s + (b * 2 + 1) * C);
  });
  at::Tensor dw = at::zeros({C}, x.options()), db = at::zeros({C}, x.options());
  float *w = dw.data_ptr<float>(), *bias = db.data_ptr<float>();
  for (int64_t b = 0; b < blocks; ++b)  // in block order: the same bits on any number of threads
    for (int64_t c = 0; c < C; ++c) {
      w[c] += s[b * 2 * C + c];
      bias[c] += s[(b * 2 + 1) * C + c];
    }
  return std::tuple{dx, dw, db};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_backward(const at::Tensor& grad, const at::Tensor& x,
                                                                   const at::Tensor& mean, const at::Tensor& rstd,
                                                                   const at::Tensor& weight, const at::Tensor& bias) {
  if (at::get_num_threads() > 1)
    if (auto rows = layer_norm_backward_rows(grad, x, mean, rstd, weight)) return *std::move(rows);
  return at::native_layer_norm_backward(grad, x, {x.size(-1)}, mean, rstd, weight, bias, {true, true, true});
}

}  // namespace halo::model

#pragma GCC diagnostic pop
