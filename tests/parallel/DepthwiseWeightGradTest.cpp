// depthwise_weight_grad against oneDNN's (at::convolution_backward) over kernels, strides,
// paddings, dilations, odd channel counts (vector tails), float, double and bfloat16 (against
// the fp32 gradient of the same bf16 values), 1 and 2 threads.
#include "parallel/DepthwiseWeightGrad.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <string>
#include <tuple>

namespace halo::parallel {
namespace {

struct Case {
  int64_t C, k, stride, padding, dilation;
};

class DepthwiseWeightGradTest : public ::testing::TestWithParam<std::tuple<Case, at::ScalarType, int>> {};

TEST_P(DepthwiseWeightGradTest, EqualsLibTorch) {
  const auto [c, dtype, threads] = GetParam();
  const int before = at::get_num_threads();
  at::set_num_threads(threads);
  torch::manual_seed(3);
  const auto opts = torch::TensorOptions().dtype(dtype);
  const at::Tensor x = torch::randn({3, c.C, 9, 13}, opts).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor w = torch::randn({c.C, 1, c.k, c.k}, opts);
  const at::Tensor y = at::conv2d(x, w, {}, c.stride, c.padding, c.dilation, c.C);
  const at::Tensor go = torch::randn(y.sizes(), opts);  // contiguous (NCHW): the kernel makes it channels-last
  // bf16: the reference is oneDNN's fp32 gradient of the same (bf16) values; the direct sum is
  // fp32 too, rounded once to bf16 at the end.
  const bool bf16 = dtype == at::kBFloat16;
  const auto ref = [&](const at::Tensor& t) { return bf16 ? t.to(at::kFloat) : t; };
  const auto [gx, gw_ref, gb] =
      at::convolution_backward(ref(go), ref(x), ref(w), std::nullopt, {c.stride, c.stride}, {c.padding, c.padding},
                               {c.dilation, c.dilation}, false, {0, 0}, c.C, {false, true, false});
  DepthwiseGeometry g;
  g.stride[0] = g.stride[1] = c.stride;
  g.padding[0] = g.padding[1] = c.padding;
  g.dilation[0] = g.dilation[1] = c.dilation;
  const auto gw = depthwise_weight_grad(go, x, w.sizes(), c.C, g);
  at::set_num_threads(before);
  ASSERT_TRUE(gw.has_value());
  EXPECT_EQ(gw->sizes(), gw_ref.sizes());
  EXPECT_TRUE(gw->is_contiguous());
  EXPECT_EQ(gw->scalar_type(), dtype);
  const double tol = dtype == at::kDouble ? 1e-12 : bf16 ? 4e-3 : 1e-4;  // bf16: one rounding (2^-8)
  const double err =
      (gw->to(gw_ref.scalar_type()) - gw_ref).abs().max().item<double>() / gw_ref.abs().max().item<double>();
  EXPECT_LT(err, tol) << "C " << c.C << " k " << c.k << " stride " << c.stride << " pad " << c.padding << " dil "
                      << c.dilation;
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<Case, at::ScalarType, int>>& info) {
  const auto& [c, dtype, threads] = info.param;
  return "C" + std::to_string(c.C) + "_k" + std::to_string(c.k) + "_s" + std::to_string(c.stride) + "_p" +
         std::to_string(c.padding) + "_d" + std::to_string(c.dilation) +
         (dtype == at::kDouble     ? "_f64"
          : dtype == at::kBFloat16 ? "_bf16"
                                   : "_f32") +
         "_t" + std::to_string(threads);
}

INSTANTIATE_TEST_SUITE_P(Geometries, DepthwiseWeightGradTest,
                         ::testing::Combine(::testing::Values(Case{40, 7, 1, 3, 1}, Case{17, 3, 1, 1, 1},
                                                              Case{33, 3, 2, 1, 1}, Case{8, 5, 1, 0, 1},
                                                              Case{20, 3, 1, 2, 2}, Case{5, 7, 2, 3, 1}),
                                            ::testing::Values(at::kFloat, at::kDouble, at::kBFloat16),
                                            ::testing::Values(1, 2)),
                         param_name);

// Split over two threads by channels, the gradient keeps every bit of the one-thread sum (a
// quickstart stage-0 stripe: 40 channels, 7x7, and an odd channel count for the vector tails).
TEST(DepthwiseWeightGrad, TwoThreadsGiveTheSameBitsAsOne) {
  for (const at::ScalarType dtype : {at::kFloat, at::kDouble, at::kBFloat16})
    for (const int64_t channels : {int64_t{40}, int64_t{37}}) {
      torch::manual_seed(5);
      const auto opts = torch::TensorOptions().dtype(dtype);
      const at::Tensor x = torch::randn({4, channels, 16, 32}, opts).contiguous(at::MemoryFormat::ChannelsLast);
      const at::Tensor go = torch::randn({4, channels, 16, 32}, opts);
      const DepthwiseGeometry g{{1, 1}, {3, 3}, {1, 1}};
      const int before = at::get_num_threads();
      at::set_num_threads(1);
      const auto one = depthwise_weight_grad(go, x, {channels, 1, 7, 7}, channels, g);
      at::set_num_threads(2);
      const auto two = depthwise_weight_grad(go, x, {channels, 1, 7, 7}, channels, g);
      at::set_num_threads(before);
      ASSERT_TRUE(one && two);
      EXPECT_TRUE(torch::equal(*one, *two)) << dtype << " C " << channels;
    }
}

TEST(DepthwiseWeightGrad, DeclinesWhatItDoesNotCompute) {
  const at::Tensor x = torch::randn({2, 8, 6, 6}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor go = torch::randn({2, 8, 6, 6});
  const DepthwiseGeometry g{{1, 1}, {1, 1}, {1, 1}};
  EXPECT_FALSE(depthwise_weight_grad(go, x.contiguous(), {8, 1, 3, 3}, 8, g));                 // NCHW input
  EXPECT_FALSE(depthwise_weight_grad(go, x, {8, 2, 3, 3}, 4, g));                              // grouped, not depthwise
  EXPECT_FALSE(depthwise_weight_grad(go.to(at::kHalf), x.to(at::kHalf), {8, 1, 3, 3}, 8, g));  // fp16
  EXPECT_FALSE(depthwise_weight_grad(go, x.to(at::kBFloat16), {8, 1, 3, 3}, 8, g));            // dtypes differ
  EXPECT_FALSE(depthwise_weight_grad(go, x, {8, 8, 3, 3}, 1, g));                              // dense
  EXPECT_TRUE(depthwise_weight_grad(go, x, {8, 1, 3, 3}, 8, g));
  EXPECT_TRUE(depthwise_weight_grad(go.to(at::kBFloat16), x.to(at::kBFloat16), {8, 1, 3, 3}, 8, g));
}

}  // namespace
}  // namespace halo::parallel
