// model::layer_norm_backward_rows against ATen's LayerNorm backward in float64 over row counts
// around its blocks, column counts with and without a vector tail, and 1 to 3 threads; and
// LayerNorm2d, which takes it on more than one thread.
#include "model/LayerNormBackward.h"

#include "model/LayerNorm2d.h"
#include "support/IntraOpThreads.h"

#include <gtest/gtest.h>

#include <torch/torch.h>

#include <vector>

namespace halo::model {
namespace {

struct NormCase {
  at::Tensor grad, x, mean, rstd, weight, bias;
};

// (rows, C) as (2, rows / 2, C) where rows is even, with forward's mean and rstd.
NormCase make_norm(int64_t rows, int64_t C, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<int64_t> shape{rows, C};
  if (rows % 2 == 0) shape = {2, rows / 2, C};
  NormCase c;
  c.x = torch::randn(shape, gen) * 3 + 0.5;
  c.grad = torch::randn(shape, gen);
  c.weight = torch::randn({C}, gen);
  c.bias = torch::randn({C}, gen);
  auto [y, mean, rstd] = at::native_layer_norm(c.x, {C}, c.weight, c.bias, 1e-6);
  c.mean = mean;
  c.rstd = rstd;
  return c;
}

at::Tensor f64(const at::Tensor& t) { return t.to(torch::kDouble); }

TEST(LayerNormBackwardRows, GivesAtensGradientsToFp32Rounding) {
  for (const int64_t rows : {1, 63, 64, 65, 130, 700})
    for (const int64_t C : {1, 13, 40, 80, 320})
      for (const int threads : {1, 2, 3}) {
        const NormCase c = make_norm(rows, C, static_cast<uint64_t>(rows * 1000 + C));
        const testing::IntraOpThreads t(threads);
        const auto got = layer_norm_backward_rows(c.grad, c.x, c.mean, c.rstd, c.weight);
        ASSERT_TRUE(got.has_value());
        const auto [dx, dw, db] = *got;
        // The exact gradients of the same normalisation (forward's fp32 mean and rstd).
        auto [want_dx, want_dw, want_db] = at::native_layer_norm_backward(
            f64(c.grad), f64(c.x), {C}, f64(c.mean), f64(c.rstd), f64(c.weight), f64(c.bias), {true, true, true});
        const std::string where =
            "rows " + std::to_string(rows) + " C " + std::to_string(C) + " threads " + std::to_string(threads);
        EXPECT_EQ(dx.sizes(), c.x.sizes()) << where;
        EXPECT_EQ(dx.dtype(), torch::kFloat);
        // Relative to the size of the terms summed (fp32 rounding of sums over C or rows).
        const double scale_x = (f64(c.grad).abs() * f64(c.weight).abs() * f64(c.rstd)).max().item<double>();
        EXPECT_LT((f64(dx) - want_dx).abs().max().item<double>(), 2e-5 * scale_x) << where;
        // Per column: the sum of the magnitudes it adds up.
        const at::Tensor xhat = (f64(c.x) - f64(c.mean)) * f64(c.rstd);
        const at::Tensor scale_w = (f64(c.grad).abs() * xhat.abs()).reshape({-1, C}).sum(0);
        const at::Tensor scale_b = f64(c.grad).abs().reshape({-1, C}).sum(0);
        EXPECT_TRUE(((f64(dw) - want_dw).abs() <= 1e-5 * scale_w + 1e-7).all().item<bool>()) << where;
        EXPECT_TRUE(((f64(db) - want_db).abs() <= 1e-5 * scale_b + 1e-7).all().item<bool>()) << where;
      }
}

TEST(LayerNormBackwardRows, GivesTheSameBitsOnAnyNumberOfThreads) {
  const NormCase c = make_norm(28 * 16 * 8, 40, 5);  // the quickstart's first stage, a quarter of its rows
  std::vector<std::tuple<at::Tensor, at::Tensor, at::Tensor>> runs;
  for (const int threads : {1, 2, 3}) {
    const testing::IntraOpThreads t(threads);
    runs.push_back(*layer_norm_backward_rows(c.grad, c.x, c.mean, c.rstd, c.weight));
  }
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_TRUE(torch::equal(std::get<0>(runs[0]), std::get<0>(runs[i]))) << i;
    EXPECT_TRUE(torch::equal(std::get<1>(runs[0]), std::get<1>(runs[i]))) << i;
    EXPECT_TRUE(torch::equal(std::get<2>(runs[0]), std::get<2>(runs[i]))) << i;
  }
}

TEST(LayerNormBackwardRows, LeavesOtherInputsToAten) {
  const NormCase c = make_norm(64, 40, 1);
  EXPECT_FALSE(layer_norm_backward_rows(f64(c.grad), f64(c.x), f64(c.mean), f64(c.rstd), f64(c.weight)));  // float64
  EXPECT_FALSE(layer_norm_backward_rows(c.grad.transpose(0, 1), c.x.transpose(0, 1), c.mean, c.rstd, c.weight));
  EXPECT_FALSE(layer_norm_backward_rows(c.grad, c.x, c.mean, c.rstd, c.weight.narrow(0, 0, 20)));  // another C
  EXPECT_FALSE(layer_norm_backward_rows(c.grad.narrow(-1, 0, 20), c.x, c.mean, c.rstd, c.weight));
  EXPECT_FALSE(layer_norm_backward_rows(c.grad.narrow(-1, 0, 20).contiguous(), c.x, c.mean, c.rstd, c.weight));
  EXPECT_FALSE(layer_norm_backward_rows(c.grad, c.x, c.mean.narrow(0, 0, 1).contiguous(), c.rstd, c.weight));
}

// LayerNorm2d (the stem's and the downsamples'): on two threads its backward is
// layer_norm_backward_rows, on one ATen's; both give ATen's values and gradients.
TEST(LayerNorm2dRows, GivesAtensValuesAndGradientsOnOneAndTwoThreads) {
  for (const int threads : {1, 2}) {
    const testing::IntraOpThreads t(threads);
    torch::manual_seed(3);
    LayerNorm2d ln(40);
    {
      const torch::NoGradGuard no_grad;
      ln->weight.normal_();
      ln->bias.normal_();
    }
    const at::Tensor x0 = torch::randn({4, 40, 16, 32}).contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor r = torch::randn({4, 40, 16, 32});
    const at::Tensor x = x0.clone().requires_grad_(true);
    const at::Tensor y = ln->forward(x);
    const std::string node = y.grad_fn()->next_edges().at(0).function->name();
    EXPECT_EQ(node.find("LayerNormRows") != std::string::npos, threads > 1) << node;
    (y * r).sum().backward();
    const at::Tensor xr = x0.clone().requires_grad_(true);
    const at::Tensor w = ln->weight.detach().clone().requires_grad_(true);
    const at::Tensor b = ln->bias.detach().clone().requires_grad_(true);
    const at::Tensor want = at::layer_norm(xr.permute({0, 2, 3, 1}), {40}, w, b, 1e-6).permute({0, 3, 1, 2});
    (want * r).sum().backward();
    EXPECT_TRUE(torch::equal(y, want)) << threads;
    const auto rel = [](const at::Tensor& a, const at::Tensor& e) {
      return ((a - e).abs().max() / e.abs().max()).item<double>();
    };
    EXPECT_LT(rel(x.grad(), xr.grad()), 1e-5) << threads;
    EXPECT_LT(rel(ln->weight.grad(), w.grad()), 1e-5) << threads;
    EXPECT_LT(rel(ln->bias.grad(), b.grad()), 1e-5) << threads;
  }
}

}  // namespace
}  // namespace halo::model
