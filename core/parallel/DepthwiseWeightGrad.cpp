// Per tap (i, j) of the kernel and per channel c: the sum over b, h', w' of
// grad_out[b, c, h', w'] * input[b, c, h' * sH + i * dH - pH, w' * sW + j * dW - pW], with
// the channels innermost (channels-last): one vector multiply-add per 64 bytes of channels.
#include "parallel/DepthwiseWeightGrad.h"

#include <ATen/ATen.h>

#include "parallel/ThreadSplit.h"
#include "shard/ConvSpec.h"
#include "util/TargetClones.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

// The vector helpers below are always inlined into one caller per instruction set: no vector
// crosses a call boundary whose ABI the warning is about. (Popped at the end: unity builds
// compile the next file in this same translation unit.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace halo::parallel {

namespace {

struct Dims {
  int64_t B, C, H, W, Ho, Wo, kH, kW;
  DepthwiseGeometry g;
  int64_t c0 = 0, c1 = 0;  // the channels [c0, c1) this call sums (one thread's part)
};

typedef float F32x16 __attribute__((vector_size(64)));
typedef float F32x8 __attribute__((vector_size(32)));
typedef float F32x4 __attribute__((vector_size(16)));
typedef double F64x8 __attribute__((vector_size(64)));
typedef double F64x4 __attribute__((vector_size(32)));
typedef double F64x2 __attribute__((vector_size(16)));

// N bytes of T as one GCC vector (a single T where N is its size).
template <int N, typename T>
using Vec = std::conditional_t<
    std::is_same_v<T, float>,
    std::conditional_t<N == 64, F32x16, std::conditional_t<N == 32, F32x8, std::conditional_t<N == 16, F32x4, T>>>,
    std::conditional_t<N == 64, F64x8, std::conditional_t<N == 32, F64x4, std::conditional_t<N == 16, F64x2, T>>>>;

template <int N, typename T>
inline __attribute__((always_inline)) Vec<N, T> load(const T* p) {
  Vec<N, T> v;
  std::memcpy(&v, p, sizeof(v));  // an unaligned vector load
  return v;
}

// One row of taps for channels [c, c + N / sizeof(T)): r[j] sums go[ow] * x[iw(ow, j)] over
// the output columns in registers (KW independent chains), then adds into acc (KW, C).
template <int N, int KW, typename T>
inline __attribute__((always_inline)) void tap_row(const Dims& d, const T* go_row, const T* x_row, T* acc, int64_t c) {
  using V = Vec<N, T>;
  const int64_t C = d.C, s = d.g.stride[1], dil = d.g.dilation[1], pad = d.g.padding[1];
  // Output columns where every tap's input column lies inside [0, W): [lo, hi).
  const int64_t lo = std::min(d.Wo, pad <= 0 ? int64_t{0} : (pad + s - 1) / s);
  const int64_t last = d.W - 1 - (KW - 1) * dil + pad;  // the largest ow * s every tap reaches
  const int64_t hi = std::max(lo, std::min(d.Wo, last < 0 ? int64_t{0} : last / s + 1));
  V r[KW] = {};
  auto checked = [&](int64_t ow) {
    const V g = load<N>(go_row + ow * C + c);
    for (int j = 0; j < KW; ++j) {
      const int64_t iw = ow * s + j * dil - pad;
      if (iw >= 0 && iw < d.W) r[j] += g * load<N>(x_row + iw * C + c);
    }
  };
  for (int64_t ow = 0; ow < lo; ++ow) checked(ow);
  for (int64_t ow = lo; ow < hi; ++ow) {
    const V g = load<N>(go_row + ow * C + c);
    const T* xp = x_row + (ow * s - pad) * C + c;
    for (int j = 0; j < KW; ++j) r[j] += g * load<N>(xp + j * dil * C);
  }
  for (int64_t ow = hi; ow < d.Wo; ++ow) checked(ow);
  for (int j = 0; j < KW; ++j) {
    V a = load<N>(acc + j * C + c);
    a += r[j];
    std::memcpy(acc + j * C + c, &a, sizeof(V));
  }
}

// Channels [c0, c1) of one tap row: 64-byte blocks, then one of 32, 16, then single lanes
// (each lane's sum is the same whichever width carries it).
template <int KW, typename T>
inline __attribute__((always_inline)) void tap_rows(const Dims& d, const T* go_row, const T* x_row, T* acc) {
  int64_t c = d.c0;
  for (; c + int64_t{64 / sizeof(T)} <= d.c1; c += 64 / sizeof(T)) tap_row<64, KW>(d, go_row, x_row, acc, c);
  if (c + int64_t{32 / sizeof(T)} <= d.c1) tap_row<32, KW>(d, go_row, x_row, acc, c), c += 32 / sizeof(T);
  if (c + int64_t{16 / sizeof(T)} <= d.c1) tap_row<16, KW>(d, go_row, x_row, acc, c), c += 16 / sizeof(T);
  for (; c < d.c1; ++c) tap_row<sizeof(T), KW>(d, go_row, x_row, acc, c);
}

// Every sample into acc (kH, KW, C).
template <int KW, typename T>
inline __attribute__((always_inline)) void accumulate(const Dims& d, const T* go, const T* x, T* acc) {
  for (int64_t b = 0; b < d.B; ++b)
    for (int64_t oh = 0; oh < d.Ho; ++oh)
      for (int64_t i = 0; i < d.kH; ++i) {
        const int64_t ih = oh * d.g.stride[0] + i * d.g.dilation[0] - d.g.padding[0];
        if (ih < 0 || ih >= d.H) continue;
        tap_rows<KW>(d, go + ((b * d.Ho + oh) * d.Wo) * d.C, x + ((b * d.H + ih) * d.W) * d.C, acc + i * KW * d.C);
      }
}

// The kernel widths of ConvSpec::direct_depthwise_grad, each with its own loop.
template <typename T>
inline __attribute__((always_inline)) void accumulate_any(const Dims& d, const T* go, const T* x, T* acc) {
  if (d.kW == 7)
    accumulate<7>(d, go, x, acc);
  else if (d.kW == 5)
    accumulate<5>(d, go, x, acc);
  else
    accumulate<3>(d, go, x, acc);
}

HALO_TARGET_CLONES void accumulate_f32(const Dims& d, const float* go, const float* x, float* acc) {
  accumulate_any(d, go, x, acc);
}

HALO_TARGET_CLONES void accumulate_f64(const Dims& d, const double* go, const double* x, double* acc) {
  accumulate_any(d, go, x, acc);
}

// Every channel, split over the process's threads in runs of 8 (disjoint columns of acc).
template <typename T>
void accumulate_split(const Dims& d, const T* go, const T* x, T* acc) {
  constexpr int64_t kRun = 8;
  split_over_threads((d.C + kRun - 1) / kRun, d.B * d.Ho * d.Wo * d.kH * d.kW * kRun, [&](int64_t begin, int64_t end) {
    Dims part = d;
    part.c0 = begin * kRun;
    part.c1 = std::min(d.C, end * kRun);
    if constexpr (std::is_same_v<T, float>)
      accumulate_f32(part, go, x, acc);
    else
      accumulate_f64(part, go, x, acc);
  });
}

}  // namespace

bool depthwise_grad_applies(const at::Tensor& input, at::IntArrayRef weight_sizes, int64_t groups) {
  if (!input.defined() || !input.is_cpu() || input.dim() != 4 || weight_sizes.size() != 4 || weight_sizes[1] != 1)
    return false;
  shard::ConvSpec spec;
  spec.kernel = {weight_sizes[2], weight_sizes[3]};
  spec.groups = groups;
  const auto t = input.scalar_type();
  const bool summed = t == at::kFloat || t == at::kDouble || t == at::kBFloat16;
  const int64_t bytes = summed ? static_cast<int64_t>(input.element_size()) : 0;
  return spec.direct_depthwise_grad(input.size(1), weight_sizes[0], bytes) &&
         input.is_contiguous(at::MemoryFormat::ChannelsLast);
}

std::optional<at::Tensor> depthwise_weight_grad(const at::Tensor& grad_out, const at::Tensor& input,
                                                at::IntArrayRef weight_sizes, int64_t groups,
                                                const DepthwiseGeometry& geometry) {
  if (!depthwise_grad_applies(input, weight_sizes, groups) || grad_out.scalar_type() != input.scalar_type())
    return std::nullopt;
  const at::Tensor go = grad_out.contiguous(at::MemoryFormat::ChannelsLast);  // (B, C, H', W') as (B, H', W', C)
  const Dims d{input.size(0), input.size(1),   input.size(2),   input.size(3), go.size(2),
               go.size(3),    weight_sizes[2], weight_sizes[3], geometry,      0,
               input.size(1)};
  // Split over the process's threads by channels: the same bits for any thread count.
  const bool bf16 = input.scalar_type() == at::kBFloat16;
  at::Tensor sum = at::zeros({d.kH, d.kW, d.C}, input.options().dtype(bf16 ? at::kFloat : input.scalar_type()));
  if (bf16) {  // one sample at a time in fp32 (bf16 products are exact in fp32), summed in fp32
    Dims one = d;
    one.B = 1;
    for (int64_t b = 0; b < d.B; ++b) {
      const at::Tensor gb = go.narrow(0, b, 1).to(at::kFloat, false, false, at::MemoryFormat::ChannelsLast);
      const at::Tensor xb = input.narrow(0, b, 1).to(at::kFloat, false, false, at::MemoryFormat::ChannelsLast);
      accumulate_split(one, gb.const_data_ptr<float>(), xb.const_data_ptr<float>(), sum.data_ptr<float>());
    }
    return sum.permute({2, 0, 1}).to(at::kBFloat16).contiguous().view({d.C, 1, d.kH, d.kW});
  }
  if (input.scalar_type() == at::kFloat)
    accumulate_split(d, go.const_data_ptr<float>(), input.const_data_ptr<float>(), sum.data_ptr<float>());
  else
    accumulate_split(d, go.const_data_ptr<double>(), input.const_data_ptr<double>(), sum.data_ptr<double>());
  return sum.permute({2, 0, 1}).contiguous().view({d.C, 1, d.kH, d.kW});
}

}  // namespace halo::parallel

#pragma GCC diagnostic pop
