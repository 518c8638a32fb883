// The min/max-per-column decimation against a brute-force scan, and TensorBoard smoothing
// against its formula worked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "EnvelopeSampler.h"

namespace halo::gui {
namespace {

TEST(EnvelopeSampler, MatchesBruteForcePerColumn) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> x, y;
  for (int i = 0; i < 20000; ++i) x.push_back(i * 0.5), y.push_back(std::sin(i * 0.01) + noise(rng));
  y[123] = std::nan("");  // NaN steps are skipped, not drawn
  const double x0 = 1000.25, x1 = 7000.75;
  const int columns = 357;
  const auto cols = EnvelopeSampler::sample(x, y, x0, x1, columns);
  const double w = (x1 - x0) / columns;
  std::vector<double> lo(columns, INFINITY), hi(columns, -INFINITY), last(columns, NAN);
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] < x0 || x[i] > x1 || !std::isfinite(y[i])) continue;
    const int c = std::min(columns - 1, static_cast<int>((x[i] - x0) / w));
    lo[c] = std::min(lo[c], y[i]), hi[c] = std::max(hi[c], y[i]), last[c] = y[i];
  }
  size_t k = 0;
  for (int c = 0; c < columns; ++c) {
    if (!std::isfinite(lo[c])) continue;
    ASSERT_LT(k, cols.size());
    EXPECT_DOUBLE_EQ(cols[k].x, x0 + (c + 0.5) * w);
    EXPECT_EQ(cols[k].lo, lo[c]);
    EXPECT_EQ(cols[k].hi, hi[c]);
    EXPECT_EQ(cols[k].last, last[c]);
    ++k;
  }
  EXPECT_EQ(k, cols.size());
  EXPECT_LE(cols.size(), static_cast<size_t>(columns));
}

TEST(EnvelopeSampler, EmptyAndOutOfRange) {
  std::vector<double> x{1, 2, 3}, y{4, 5, 6};
  EXPECT_TRUE(EnvelopeSampler::sample(x, y, 10, 20, 100).empty());
  EXPECT_TRUE(EnvelopeSampler::sample({}, {}, 0, 1, 100).empty());
  const auto one = EnvelopeSampler::sample(x, y, 0, 10, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].lo, 4);
  EXPECT_EQ(one[0].hi, 6);
  EXPECT_EQ(one[0].last, 6);
}

TEST(EnvelopeSampler, SmoothingIsTensorBoardsDebiasedEma) {
  // w = 0.5: acc 0.5, 1.25, 2.125; debiased by 1 - 0.5^k: 1, 1.6667, 2.428571.
  const auto s = EnvelopeSampler::smooth({1, 2, 3}, 0.5);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0], 1.0, 1e-12);
  EXPECT_NEAR(s[1], 1.25 / 0.75, 1e-12);
  EXPECT_NEAR(s[2], 2.125 / 0.875, 1e-12);
  EXPECT_EQ(EnvelopeSampler::smooth({1, 2, 3}, 0.0), (std::vector<double>{1, 2, 3}));
}

}  // namespace
}  // namespace halo::gui
