// Shortest-augmenting-path Hungarian algorithm with potentials, O(n^2 m) for n <= m; a
// wider-than-tall problem is solved transposed, as scipy does.
#include "util/LinearAssignment.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::util {
namespace {

// n <= m; a(i, j) for 1-based i in [1, n], j in [1, m]. Returns row of each column (0 = none).
template <class Cost>
std::vector<int64_t> solve(int64_t n, int64_t m, Cost a) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> u(n + 1, 0.0), v(m + 1, 0.0);
  std::vector<int64_t> p(m + 1, 0), way(m + 1, 0);
  for (int64_t i = 1; i <= n; ++i) {
    p[0] = i;
    int64_t j0 = 0;
    std::vector<double> minv(m + 1, inf);
    std::vector<char> used(m + 1, 0);
    do {
      used[j0] = 1;
      const int64_t i0 = p[j0];
      double delta = inf;
      int64_t j1 = 0;
      for (int64_t j = 1; j <= m; ++j) {
        if (used[j]) continue;
        const double cur = a(i0, j) - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (int64_t j = 0; j <= m; ++j) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] != 0);
    do {
      const int64_t j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  return p;
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> linear_sum_assignment(const std::vector<double>& cost, int64_t rows,
                                                               int64_t cols) {
  if (rows < 0 || cols < 0 || static_cast<int64_t>(cost.size()) != rows * cols)
    throw Error(fmt::format("linear_sum_assignment: cost has {} entries, expected {} x {}", cost.size(), rows, cols));
  for (double c : cost)
    if (!std::isfinite(c))
      throw Error("linear_sum_assignment: the cost matrix holds a non-finite value",
                  "check the matching costs for NaN/inf");
  std::vector<std::pair<int64_t, int64_t>> out;
  if (rows == 0 || cols == 0) return out;
  if (rows <= cols) {
    auto p = solve(rows, cols, [&](int64_t i, int64_t j) { return cost[(i - 1) * cols + (j - 1)]; });
    for (int64_t j = 1; j <= cols; ++j)
      if (p[j] != 0) out.emplace_back(p[j] - 1, j - 1);
  } else {
    auto p = solve(cols, rows, [&](int64_t i, int64_t j) { return cost[(j - 1) * cols + (i - 1)]; });
    for (int64_t j = 1; j <= rows; ++j)
      if (p[j] != 0) out.emplace_back(j - 1, p[j] - 1);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace halo::util
