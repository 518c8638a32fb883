// linear_sum_assignment against brute force over every assignment of small random matrices,
// square and rectangular both ways, plus the edge cases.
#include <algorithm>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "util/Error.h"
#include "util/LinearAssignment.h"

namespace halo::util {
namespace {

double brute_force(const std::vector<double>& c, int64_t rows, int64_t cols) {
  // Assign min(rows, cols) rows to distinct columns: permute the larger side.
  const int64_t n = std::min(rows, cols), m = std::max(rows, cols);
  std::vector<int64_t> idx(m);
  std::iota(idx.begin(), idx.end(), 0);
  double best = 1e300;
  do {
    double s = 0;
    for (int64_t k = 0; k < n; ++k) s += rows <= cols ? c[k * cols + idx[k]] : c[idx[k] * cols + k];
    best = std::min(best, s);
  } while (std::next_permutation(idx.begin(), idx.end()));
  return best;
}

class LinearAssignmentShapes : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(LinearAssignmentShapes, MatchesBruteForce) {
  const auto [rows, cols] = GetParam();
  std::mt19937 rng(rows * 31 + cols);
  std::uniform_real_distribution<double> u(-5.0, 5.0);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> c(rows * cols);
    for (auto& x : c) x = trial % 3 == 0 ? std::round(u(rng)) : u(rng);  // ties too
    const auto pairs = linear_sum_assignment(c, rows, cols);
    ASSERT_EQ(static_cast<int>(pairs.size()), std::min(rows, cols));
    std::vector<char> row_used(rows, 0), col_used(cols, 0);
    double total = 0;
    for (size_t k = 0; k < pairs.size(); ++k) {
      const auto [r, cc] = pairs[k];
      if (k > 0) {
        EXPECT_LT(pairs[k - 1].first, r);  // sorted by row
      }
      ASSERT_FALSE(row_used[r]);
      ASSERT_FALSE(col_used[cc]);
      row_used[r] = col_used[cc] = 1;
      total += c[r * cols + cc];
    }
    EXPECT_NEAR(total, brute_force(c, rows, cols), 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LinearAssignmentShapes,
                         ::testing::Values(std::pair{1, 1}, std::pair{3, 3}, std::pair{6, 6}, std::pair{2, 5},
                                           std::pair{5, 2}, std::pair{4, 7}, std::pair{7, 3}));

TEST(LinearAssignment, EmptyAndInvalid) {
  EXPECT_TRUE(linear_sum_assignment({}, 0, 4).empty());
  EXPECT_TRUE(linear_sum_assignment({}, 3, 0).empty());
  EXPECT_THROW(linear_sum_assignment({1.0, 2.0}, 2, 2), Error);
  EXPECT_THROW(linear_sum_assignment({1.0, std::nan("")}, 1, 2), Error);
}

}  // namespace
}  // namespace halo::util
