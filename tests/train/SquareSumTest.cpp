// The gradient norm's square sum: ATen's fp64 square-then-sum over dtypes, lengths, strides,
// empties and lists, and in float64 the bits of its documented order (no FMA) on every CPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "train/SquareSum.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace halo::train {
namespace {

double reference(const std::vector<at::Tensor>& ts) {
  double sum = 0;
  for (const at::Tensor& t : ts) sum += t.to(at::kDouble).pow(2).sum().item<double>();
  return sum;
}

class SquareSumLength : public ::testing::TestWithParam<int64_t> {};

TEST_P(SquareSumLength, EqualsAtenInFloatAndDouble) {
  torch::manual_seed(GetParam());
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const at::Tensor t = torch::randn({GetParam()}, at::TensorOptions().dtype(dtype)) * 3;
    const double want = reference({t});
    EXPECT_NEAR(square_sum({t}), want, 1e-14 * want + 1e-300) << "dtype " << dtype << ", n " << GetParam();
    EXPECT_GT(square_sum({t}), 0.0);
  }
}

// Around one vector (8), one loop round (32), and a gradient's size with a tail.
INSTANTIATE_TEST_SUITE_P(Lengths, SquareSumLength, ::testing::Values(1, 7, 8, 31, 32, 33, 64, 1000, 409601));

// SquareSum.h's order in plain scalar code, every square rounded to double before it is added.
double square_sum_in_order(const std::vector<double>& x) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<double> sq(x.size());
  for (size_t i = 0; i < x.size(); ++i) sq[i] = x[i] * x[i];
  double total = 0;
  int64_t i = 0;
  while (i + 32 <= n) {
    double acc[4][8] = {};
    for (const int64_t end = std::min(n, i + 4096); i + 32 <= end; i += 32)
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 8; ++l) acc[k][l] += sq[i + 8 * k + l];
    double block = 0;
    for (int l = 0; l < 8; ++l) block += (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
    total += block;
  }
  for (; i < n; ++i) total += sq[i];
  return total;
}

// An FMA clone (AVX-512F) would round x * x + acc once: float64 norms would then differ in
// their last bits between AVX-512 and AVX2 hosts of one multi-host run. Long random sums hide
// that in their rounding, so pairs a, b alone in one lane (or in the tail) show it: fused, about
// a quarter of them would round round(a^2) + b^2 otherwise than round(a^2) + round(b^2).
TEST(SquareSum, Float64GivesTheBitsOfItsOrderOnEveryCpuKind) {
  torch::manual_seed(7);
  const at::Tensor pairs = torch::randn({64, 2}, at::kDouble);
  int differ_when_fused = 0;
  for (int64_t j = 0; j < 64; ++j) {
    const double a = pairs[j][0].item<double>(), b = pairs[j][1].item<double>();
    const volatile double a2 = a * a, b2 = b * b;  // rounded, even where this file may fuse
    differ_when_fused += std::fma(b, b, a2) != a2 + b2;
    std::vector<double> lane(64, 0.0);  // lane j % 32, rounds 0 and 1
    lane[j % 32] = a;
    lane[32 + j % 32] = b;
    for (const std::vector<double>& x : {lane, std::vector<double>{a, b}}) {  // a vector lane, the tail
      const at::Tensor t =
          torch::from_blob(const_cast<double*>(x.data()), {static_cast<int64_t>(x.size())}, at::kDouble);
      const double want = square_sum_in_order(x), got = square_sum({t});
      EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want)) << "pair " << j << ", n " << x.size();
    }
  }
  EXPECT_GT(differ_when_fused, 4) << "the pairs must tell a fused sum from a rounded one";
  for (const int64_t n : {1000, 8192 + 77, 409601}) {  // the whole order on long sums
    const at::Tensor t = torch::randn({n}, at::kDouble) * 3 + 0.1;
    std::vector<double> x(t.const_data_ptr<double>(), t.const_data_ptr<double>() + n);
    EXPECT_EQ(std::bit_cast<uint64_t>(square_sum({t})), std::bit_cast<uint64_t>(square_sum_in_order(x))) << "n " << n;
  }
}

TEST(SquareSum, ReadsStridedTensorsInPlaceAndCopiesTheRest) {
  const at::Tensor w = torch::randn({320, 1280});
  const at::Tensor transposed = w.t();                                       // dense, other strides: read in place
  const at::Tensor every_other = torch::randn({64, 50}).slice(1, 0, 50, 2);  // not dense: copied first
  const at::Tensor channels_last = torch::randn({4, 40, 7, 7}).contiguous(at::MemoryFormat::ChannelsLast);
  for (const at::Tensor& t : {transposed, every_other, channels_last}) {
    const double want = reference({t});
    EXPECT_NEAR(square_sum({t}), want, 1e-14 * want);
  }
  EXPECT_NEAR(square_sum({w.t()}), square_sum({w}), 1e-14 * square_sum({w}));
}

TEST(SquareSum, HalfPrecisionsAndListsAndEmpties) {
  const at::Tensor b = torch::randn({1003}).to(at::kBFloat16), h = torch::randn({77}).to(at::kHalf);
  const at::Tensor f = torch::randn({40, 160}), none = torch::empty({0});
  const std::vector<at::Tensor> all{b, h, f, none};
  const double want = reference(all);
  EXPECT_NEAR(square_sum(all), want, 1e-14 * want);
  EXPECT_EQ(square_sum({}), 0.0);
  EXPECT_EQ(square_sum({none}), 0.0);
  EXPECT_EQ(square_sum({torch::zeros({100})}), 0.0);
}

TEST(SquareSum, OverflowAndNanShowAsTheyWould) {  // the step's skip test reads them
  EXPECT_TRUE(std::isnan(square_sum({torch::tensor({1.0f, NAN, 2.0f})})));
  EXPECT_TRUE(std::isinf(square_sum({torch::full({40}, INFINITY)})));
  // fp32's largest values square past fp32 but not past fp64
  EXPECT_NEAR(square_sum({torch::full({3}, 3e38f)}), 3 * 9e76, 1e-6 * 3 * 9e76);
}

}  // namespace
}  // namespace halo::train
