// numpy's own float arithmetic where the devkit's results depend on it: the pairwise
// summation behind sum()/mean() and float32 means, so Halo rounds where numpy rounds.
#pragma once

#include <cstdint>
#include <vector>

namespace halo::eval {

// numpy's pairwise summation (blocks of 8 partial sums, halving above 128 elements), in T.
template <class T>
T pairwise_sum(const T* a, int64_t n) {
  if (n < 8) {
    T res = T(-0.0);
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    T r[8];
    for (int k = 0; k < 8; ++k) r[k] = a[k];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int k = 0; k < 8; ++k) r[k] += a[i + k];
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

// ndarray.mean() of a non-empty array, in the array's own precision (float32 stays float32).
template <class T>
T numpy_mean(const std::vector<T>& a) {
  return pairwise_sum(a.data(), static_cast<int64_t>(a.size())) / static_cast<T>(a.size());
}

}  // namespace halo::eval
