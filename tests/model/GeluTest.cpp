// model::gelu and gelu_backward_keep_value_: the fp32 loops give GELU's value and slope to fp32's
// rounding of the exact (float64) ones, as ATen's own fp32 kernels do, and the slope's column sums;
// every other case is ATen's.
#include "model/Gelu.h"

#include <gtest/gtest.h>

#include <torch/torch.h>

#include <limits>
#include <vector>

namespace halo::model {
namespace {

// x over GELU's working range and its tails, an odd count so the loop's padded tail runs too.
at::Tensor inputs() {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const at::Tensor specials = torch::tensor(
      {0.0f, -0.0f, 1e-30f, -1e-30f, 13.3f, -13.3f, 30.0f, -30.0f, 1e20f, -1e20f, 3e38f, -3e38f, inf, -inf, nan});
  return torch::cat({torch::linspace(-12.0, 12.0, 20001, torch::kFloat), specials});
}

// |got - want| allowed: erf's approximation (1.5e-7 absolute) and fp32 rounding, per unit of grad.
at::Tensor allowed(const at::Tensor& x, const at::Tensor& grad) {
  return 4e-7 * (1 + x.abs().to(torch::kDouble)) * grad.abs().to(torch::kDouble) + 1e-30;
}

// 0 finite, 1 infinite, 2 NaN, per element.
at::Tensor value_class(const at::Tensor& t) { return t.isinf().to(torch::kInt) + 2 * t.isnan().to(torch::kInt); }

// NaN and infinity where ATen's fp32 kernel gives them or where the float64 result does in fp32
// (ATen's own fp32 kernels differ at the edges between instruction sets: on AVX-512, gelu(3e38)
// is inf and gelu(inf) NaN); elsewhere within `allowed` of the float64 result.
void expect_close(const at::Tensor& got, const at::Tensor& aten_f32, const at::Tensor& exact,
                  const at::Tensor& tolerance, const char* what) {
  const at::Tensor cls = value_class(got);
  const at::Tensor agree = cls.eq(value_class(aten_f32)) | cls.eq(value_class(exact.to(torch::kFloat)));
  EXPECT_TRUE(agree.all().item<bool>()) << what << ": NaN or infinity at x index "
                                        << (~agree).nonzero().flatten().slice(0, 0, 4);
  const at::Tensor finite = exact.isfinite() & got.isfinite();
  const at::Tensor error = (got.to(torch::kDouble) - exact).abs().masked_fill(~finite, 0);
  const at::Tensor excess = (error - tolerance).masked_fill(~finite, -1);
  EXPECT_LE(excess.max().item<double>(), 0) << what << ": worst error " << error.max().item<double>();
  const at::Tensor aten_finite = exact.isfinite() & aten_f32.isfinite();
  const at::Tensor aten_error = (aten_f32.to(torch::kDouble) - exact).abs().masked_fill(~aten_finite, 0);
  EXPECT_LE((aten_error - tolerance).masked_fill(~aten_finite, -1).max().item<double>(), 0)
      << what << ": the bound does not even hold for ATen's own fp32 kernel";
}

TEST(Gelu, Float32MatchesTheExactValueAndSlopeToRounding) {
  const at::Tensor x0 = inputs();
  torch::manual_seed(3);
  const at::Tensor g0 = torch::randn(x0.sizes()) + 0.5;
  at::Tensor x = x0.clone(), g = g0.clone();
  const auto version = x._version();
  gelu_backward_keep_value_(g, x);
  EXPECT_GT(x._version(), version) << "autograd must see that x was overwritten";

  const at::Tensor xd = x0.to(torch::kDouble), gd = g0.to(torch::kDouble);
  expect_close(x, at::gelu(x0), at::gelu(xd), allowed(x0, torch::ones_like(x0)), "gelu(x)");
  const at::Tensor forward = model::gelu(x0);
  EXPECT_TRUE(torch::equal(forward.isnan(), x.isnan()));
  EXPECT_TRUE(torch::equal(forward.nan_to_num(0), x.nan_to_num(0))) << "forward and backward differ";
  expect_close(g, at::gelu_backward(g0, x0), at::gelu_backward(gd, xd), allowed(x0, g0), "grad * gelu'(x)");
}

TEST(Gelu, EveryOtherLayoutAndDtypeIsAtensBitForBit) {
  torch::manual_seed(4);
  for (const auto dtype : {torch::kDouble, torch::kBFloat16, torch::kFloat}) {
    // fp32 only through a transposed (not contiguous) view; the others contiguous
    const bool strided = dtype == torch::kFloat;
    at::Tensor x = (torch::randn({37, 29}) * 3).to(dtype), g = torch::randn({37, 29}).to(dtype);
    if (strided) x = x.t().contiguous().t(), g = g.t().contiguous().t();
    const at::Tensor want_g = at::gelu_backward(g, x), want_x = at::gelu(x);
    EXPECT_TRUE(torch::equal(model::gelu(x), want_x)) << dtype;
    const at::Tensor sums = gelu_backward_keep_value_(g, x);
    EXPECT_TRUE(torch::equal(x, want_x)) << dtype;
    EXPECT_TRUE(torch::equal(g, want_g)) << dtype;
    EXPECT_TRUE(torch::equal(sums, want_g.sum(0))) << dtype;
  }
}

// The fp32 loop's column sums (a Linear's bias gradient): rows past a 64-row block and columns
// past a vector's 8 included, within fp32 rounding of the float64 sum of the grad it wrote.
TEST(GeluBackwardKeepValue, Float32ColumnSumsMatchTheSumOfTheNewGradient) {
  torch::manual_seed(5);
  for (const auto& shape : {std::vector<int64_t>{300, 21}, {2, 65, 160}, {7, 8}, {1, 5}}) {
    at::Tensor x = torch::randn(shape) * 3, g = torch::randn(shape) + 0.25;
    const at::Tensor sums = gelu_backward_keep_value_(g, x);
    ASSERT_EQ(sums.scalar_type(), torch::kFloat);
    ASSERT_EQ(sums.sizes(), at::IntArrayRef({shape.back()}));
    const at::Tensor rows = g.to(torch::kDouble).reshape({-1, shape.back()});
    const at::Tensor want = rows.sum(0), scale = rows.abs().sum(0);
    const double worst = ((sums.to(torch::kDouble) - want).abs() / scale).max().item<double>();
    EXPECT_LE(worst, 1e-6) << "shape " << at::IntArrayRef(shape);
  }
}

// Split over two threads by rows, both give the bits of one thread: value, gradient and sums.
TEST(GeluBackwardKeepValue, TwoThreadsGiveTheSameBitsAsOne) {
  for (const auto& shape : {std::vector<int64_t>{28, 16, 32, 160}, {1001, 37}, {3, 5}}) {
    torch::manual_seed(7);
    const at::Tensor x = torch::randn(shape) * 3, g = torch::randn(shape) + 0.25;
    const int before = at::get_num_threads();
    std::vector<at::Tensor> got;
    for (const int threads : {1, 2}) {
      at::set_num_threads(threads);
      at::Tensor xt = x.clone(), gt = g.clone();
      const at::Tensor value = model::gelu(x);
      const at::Tensor sums = gelu_backward_keep_value_(gt, xt);
      got.insert(got.end(), {value, xt, gt, sums});
    }
    at::set_num_threads(before);
    for (size_t i = 0; i < 4; ++i)
      EXPECT_TRUE(torch::equal(got[i], got[i + 4])) << "output " << i << " shape " << at::IntArrayRef(shape);
    EXPECT_TRUE(torch::equal(got[0], got[1])) << "forward's value and backward's kept value differ";
  }
}

// With a bias (fc1's, added where GELU reads fc1's output), value, gradient, kept value and sums
// are the bits of the same calls on x + bias: fp32 in the loops on one and two threads (rows
// past a 64-row block, columns past a vector's 8), and ATen's path for float64 and a strided x.
TEST(GeluBias, GivesTheBitsOfTheSameCallOnXPlusBias) {
  const int before = at::get_num_threads();
  for (const auto& shape : {std::vector<int64_t>{2, 65, 160}, {300, 21}, {7, 8}, {1, 5}})
    for (const auto dtype : {torch::kFloat, torch::kDouble})
      for (const int threads : {1, 2}) {
        at::set_num_threads(threads);
        torch::manual_seed(11);
        const at::Tensor x = (torch::randn(shape) * 3).to(dtype), g = (torch::randn(shape) + 0.25).to(dtype);
        const at::Tensor bias = (torch::randn({shape.back()}) * 2).to(dtype);
        const at::Tensor xb = x + bias;
        EXPECT_TRUE(torch::equal(model::gelu(x, bias), model::gelu(xb)))
            << dtype << " " << at::IntArrayRef(shape) << " " << threads << " threads";
        at::Tensor x1 = x.clone(), g1 = g.clone(), x2 = xb.clone(), g2 = g.clone();
        const at::Tensor sums = gelu_backward_keep_value_(g1, x1, bias);
        const at::Tensor want_sums = gelu_backward_keep_value_(g2, x2);
        EXPECT_TRUE(torch::equal(x1, x2)) << "kept value, " << dtype << " " << threads << " threads";
        EXPECT_TRUE(torch::equal(g1, g2)) << "gradient, " << dtype << " " << threads << " threads";
        EXPECT_TRUE(torch::equal(sums, want_sums)) << "sums, " << dtype << " " << threads << " threads";
      }
  at::set_num_threads(before);
  EXPECT_THROW(model::gelu(torch::zeros({4, 8}), torch::zeros({8}, torch::kDouble)), c10::Error) << "a double bias";
  EXPECT_THROW(model::gelu(torch::zeros({4, 8}), torch::zeros({4, 1})), c10::Error) << "a bias that broadcasts";
}

TEST(GeluBackwardKeepValue, ShapesThatDifferOrSharedMemoryAreRefused) {
  at::Tensor x = torch::zeros({4, 8}), g = torch::zeros({8, 4});
  EXPECT_THROW(gelu_backward_keep_value_(g, x), c10::Error);
  at::Tensor view = x.view({8, 4});
  EXPECT_THROW(gelu_backward_keep_value_(view, x), c10::Error);
  at::Tensor scalar_x = torch::zeros({}), scalar_g = torch::zeros({});
  EXPECT_THROW(gelu_backward_keep_value_(scalar_g, scalar_x), c10::Error) << "no last dimension to sum along";
  at::Tensor x2 = torch::zeros({4, 8}), g2 = torch::zeros({4, 8});
  EXPECT_THROW(gelu_backward_keep_value_(g2, x2, torch::zeros({4})), c10::Error) << "a bias per row, not column";
}

}  // namespace
}  // namespace halo::model
