// CPU tensors whose elements fill their memory (any strides) are read in memory order, eight
// doubles per vector, four vectors in flight; the rest go through ATen on their device.
#include "train/SquareSum.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "util/TargetClones.h"

namespace halo::train {

namespace {

typedef double F64x8 __attribute__((vector_size(64)));
typedef float F32x8 __attribute__((vector_size(32)));

// Eight elements from p as doubles, into v (an out-parameter: no vector crosses a call).
template <class T>
inline __attribute__((always_inline)) void load8(const T* p, F64x8& v) {
  if constexpr (std::is_same_v<T, float>) {
    F32x8 f;
    std::memcpy(&f, p, sizeof f);
    v = __builtin_convertvector(f, F64x8);
  } else {
    std::memcpy(&v, p, sizeof v);
  }
}

// Blocks of kBlock elements summed in 32 lanes, the blocks' sums added in order: rounding
// grows with kBlock / 32 + the number of blocks, not with the length (as ATen's cascade sum).
constexpr int64_t kBlock = 4096;

template <class T>
inline __attribute__((always_inline)) double square_sum_of(const T* p, int64_t n) {
  double total = 0;
  int64_t i = 0;
  while (i + 32 <= n) {
    F64x8 acc[4] = {};
    for (const int64_t end = std::min(n, i + kBlock); i + 32 <= end; i += 32)
      for (int k = 0; k < 4; ++k) {
        F64x8 v;
        load8(p + i + 8 * k, v);
        acc[k] += v * v;
      }
    const F64x8 s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    double block = 0;
    for (int lane = 0; lane < 8; ++lane) block += s[lane];
    total += block;
  }
  for (; i < n; ++i) total += static_cast<double>(p[i]) * static_cast<double>(p[i]);
  return total;
}

HALO_TARGET_CLONES double square_sum_f32(const float* p, int64_t n) { return square_sum_of(p, n); }
HALO_TARGET_CLONES double square_sum_f64(const double* p, int64_t n) { return square_sum_of(p, n); }

// A CPU tensor the loop can read: every element once, its memory in one block.
bool readable_in_place(const at::Tensor& t) {
  return t.is_cpu() && !t.is_conj() && !t.is_neg() && t.layout() == at::kStrided && t.is_non_overlapping_and_dense();
}

double cpu_square_sum(const at::Tensor& t) {
  if (t.numel() == 0) return 0;
  if (!readable_in_place(t) || (t.scalar_type() != at::kFloat && t.scalar_type() != at::kDouble))
    return cpu_square_sum(t.to(at::kDouble).contiguous());
  // The lowest address of a dense tensor with non-negative strides is its data pointer.
  if (t.scalar_type() == at::kFloat) return square_sum_f32(t.const_data_ptr<float>(), t.numel());
  return square_sum_f64(t.const_data_ptr<double>(), t.numel());
}

constexpr int64_t kSlice = 1 << 16;  // elements: 2 x 512 KiB of fp64 temporaries

}  // namespace

double square_sum(const std::vector<at::Tensor>& tensors) {
  double total = 0;
  std::vector<at::Tensor> device;  // each one's square sum, still on its device
  for (const at::Tensor& t : tensors) {
    if (t.is_cpu())
      total += cpu_square_sum(t);
    else if (t.dim() != 1)
      device.push_back(t.to(at::kDouble).pow(2).sum());
    else  // ZeRO's chunks are whole buckets: a slice at a time keeps the fp64 temporaries small
      for (int64_t at = 0; at < t.numel(); at += kSlice)
        device.push_back(t.narrow(0, at, std::min(kSlice, t.numel() - at)).to(at::kDouble).pow(2).sum());
  }
  if (device.empty()) return total;
  const at::Tensor host = at::stack(device).cpu();  // one synchronisation, not one per tensor
  const double* v = host.const_data_ptr<double>();
  for (int64_t i = 0; i < host.numel(); ++i) total += v[i];
  return total;
}

}  // namespace halo::train
