// The gradient norm's square sum read in place equals ATen's fp64 square-then-sum over dtypes,
// lengths around the vector width, strided and empty tensors, and lists of them.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "train/SquareSum.h"

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
