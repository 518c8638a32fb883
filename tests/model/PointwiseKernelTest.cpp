// model::PointwiseKernel: oneDNN's 1x1 convs give the GEMMs' products and gradients to fp32's
// rounding (in oneDNN), all but fp32 stays on GEMM; the CPU kind's rule and the probe's.
#include "model/PointwiseKernel.h"

#include <gtest/gtest.h>

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <set>
#include <string>
#include <tuple>

namespace halo::model {
namespace {

double kernel_relative(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max().clamp_min(1e-300)).item<double>();
}

struct KernelProducts {
  at::Tensor out, grad_x, grad_w;
};

// x (batch, 4, 8, cin) -> (batch, 4, 8, cout), and its gradients for an output gradient g.
// Batch 16 and up: oneDNN's kernel (one thread); below it ATen's GEMM-based convolution.
KernelProducts products(at::ScalarType dtype, int64_t cin, int64_t cout, PointwiseKernel k, int64_t batch = 16) {
  torch::manual_seed(3);
  const auto o = torch::TensorOptions().dtype(dtype);
  const at::Tensor x = torch::randn({batch, 4, 8, cin}, o), w = torch::randn({cout, cin}, o);
  const at::Tensor b = torch::randn({cout}, o), g = torch::randn({batch, 4, 8, cout}, o);
  KernelProducts p;
  p.out = pointwise_product(x, w, b, k);
  std::tie(p.grad_x, p.grad_w) = pointwise_grads(g, x, w, true, true, k);
  return p;
}

// The ATen ops that ran inside fn on this thread.
std::set<std::string> ops_of(const std::function<void()>& fn) {
  static thread_local std::set<std::string>* seen = nullptr;
  std::set<std::string> names;
  seen = &names;
  const auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& f) -> std::unique_ptr<at::ObserverContext> {
        if (seen) seen->insert(f.name());
        return nullptr;
      }).scopes({at::RecordScope::FUNCTION}));
  fn();
  at::removeCallback(handle);
  seen = nullptr;
  return names;
}

TEST(PointwiseKernel, OneDnnGivesTheGemmProductsAndGradientsToRounding) {
  for (const auto& [cin, cout, batch] :
       {std::tuple<int64_t, int64_t, int64_t>{24, 96, 16}, {96, 24, 16}, {5, 7, 16}, {24, 96, 2}}) {
    const KernelProducts gemm = products(at::kFloat, cin, cout, PointwiseKernel::Gemm, batch);
    const KernelProducts onednn = products(at::kFloat, cin, cout, PointwiseKernel::OneDnn, batch);
    ASSERT_EQ(onednn.out.sizes(), gemm.out.sizes());
    ASSERT_EQ(onednn.grad_x.sizes(), gemm.grad_x.sizes());
    ASSERT_EQ(onednn.grad_w.sizes(), gemm.grad_w.sizes());
    EXPECT_TRUE(onednn.out.is_contiguous() && onednn.grad_x.is_contiguous());
    EXPECT_LE(kernel_relative(onednn.out, gemm.out), 1e-5) << cin << " -> " << cout << ", batch " << batch;
    EXPECT_LE(kernel_relative(onednn.grad_x, gemm.grad_x), 1e-5) << cin << " -> " << cout << ", batch " << batch;
    EXPECT_LE(kernel_relative(onednn.grad_w, gemm.grad_w), 1e-5) << cin << " -> " << cout << ", batch " << batch;
  }
}

TEST(PointwiseKernel, GemmIsThePlainOpsBitForBit) {
  const KernelProducts gemm = products(at::kFloat, 24, 96, PointwiseKernel::Gemm);
  torch::manual_seed(3);
  const at::Tensor x = torch::randn({16, 4, 8, 24}), w = torch::randn({96, 24});
  const at::Tensor b = torch::randn({96}), g = torch::randn({16, 4, 8, 96});
  EXPECT_TRUE(torch::equal(gemm.out, at::linear(x, w, b)));
  EXPECT_TRUE(torch::equal(gemm.grad_x, at::mm(g.reshape({-1, 96}), w).view({16, 4, 8, 24})));
  EXPECT_TRUE(torch::equal(gemm.grad_w, at::mm(g.reshape({-1, 96}).t(), x.reshape({-1, 24}))));
}

TEST(PointwiseKernel, OneDnnRunsOneDnnsConvolutionAndGemmDoesNot) {
  if (!at::hasMKLDNN()) GTEST_SKIP() << "this LibTorch has no oneDNN";
  const auto onednn = ops_of([] { products(at::kFloat, 24, 96, PointwiseKernel::OneDnn); });
  EXPECT_TRUE(onednn.contains("aten::mkldnn_convolution"));
  EXPECT_FALSE(onednn.contains("aten::mm") || onednn.contains("aten::addmm"));
  const auto gemm = ops_of([] { products(at::kFloat, 24, 96, PointwiseKernel::Gemm); });
  EXPECT_FALSE(gemm.contains("aten::mkldnn_convolution") || gemm.contains("aten::convolution_backward"));
  EXPECT_TRUE(gemm.contains("aten::mm"));
}

TEST(PointwiseKernel, Float64AndBf16StayOnGemm) {
  for (const auto dtype : {at::kDouble, at::kBFloat16}) {
    const KernelProducts gemm = products(dtype, 24, 96, PointwiseKernel::Gemm);
    const KernelProducts onednn = products(dtype, 24, 96, PointwiseKernel::OneDnn);
    EXPECT_TRUE(torch::equal(onednn.out, gemm.out)) << dtype;
    EXPECT_TRUE(torch::equal(onednn.grad_x, gemm.grad_x)) << dtype;
    EXPECT_TRUE(torch::equal(onednn.grad_w, gemm.grad_w)) << dtype;
  }
}

// parallel.pointwise cpu: oneDNN only where MKL's GEMM lacks AVX-512 code (AMD with AVX-512).
TEST(PointwiseKernel, TheCpuKindPicksOneDnnOnAmdWithAvx512Only) {
  EXPECT_EQ(kernel_for_cpu({.amd = true, .avx512f = true}), PointwiseKernel::OneDnn);
  EXPECT_EQ(kernel_for_cpu({.amd = true, .avx512f = false}), PointwiseKernel::Gemm);
  EXPECT_EQ(kernel_for_cpu({.amd = false, .avx512f = true}), PointwiseKernel::Gemm);
  EXPECT_EQ(kernel_for_cpu({.amd = false, .avx512f = false}), PointwiseKernel::Gemm);
  const CpuKind here = this_cpu_kind(), again = this_cpu_kind();
  EXPECT_EQ(here.amd, again.amd);
  EXPECT_EQ(here.avx512f, again.avx512f);
}

TEST(PointwiseKernel, OneDnnIsChosenOnlyWhenClearlyFaster) {
  EXPECT_EQ(choose_pointwise_kernel(1.0, 1.0), PointwiseKernel::Gemm);
  EXPECT_EQ(choose_pointwise_kernel(1.25, 1.0), PointwiseKernel::Gemm);  // within the margin: noise
  EXPECT_EQ(choose_pointwise_kernel(2.2, 1.0), PointwiseKernel::OneDnn);
  EXPECT_EQ(choose_pointwise_kernel(1.0, 2.0), PointwiseKernel::Gemm);
}

TEST(PointwiseKernel, TheProbeTimesBothAndLeavesTheRunsDrawsAlone) {
  torch::manual_seed(11);
  const at::Tensor before = torch::randn({4});
  torch::manual_seed(11);
  const PointwiseProbe p = probe_pointwise_kernels();
  EXPECT_TRUE(torch::equal(torch::randn({4}), before)) << "the probe drew from the default generator";
  EXPECT_GT(p.gemm_s, 0);
  EXPECT_GT(p.onednn_s, 0);
  EXPECT_LT(p.gemm_s + p.onednn_s, 5.0) << "the probe should take milliseconds";
  EXPECT_EQ(p.faster, choose_pointwise_kernel(p.gemm_s, p.onednn_s));
}

}  // namespace
}  // namespace halo::model
