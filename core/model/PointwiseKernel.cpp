// The per-pixel products either as GEMMs on (pixels, channels) rows or as oneDNN's 1x1
// convolutions on the same memory seen as channels-last NCHW; the probe times the two.
#include "model/PointwiseKernel.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <limits>

namespace halo::model {

namespace {

bool onednn_applies(const at::Tensor& x, PointwiseKernel k) {
  return k == PointwiseKernel::OneDnn && at::hasMKLDNN() && x.is_cpu() && x.dim() == 4 && x.scalar_type() == at::kFloat;
}

// (B, H, W, C) rows as the (B, C, H, W) tensor a convolution reads (channels-last when the rows
// are contiguous), and back.
at::Tensor nchw(const at::Tensor& t) { return t.permute({0, 3, 1, 2}); }
at::Tensor nhwc(const at::Tensor& t) { return t.permute({0, 2, 3, 1}); }

at::Tensor kernel_1x1(const at::Tensor& w) { return w.reshape({w.size(0), w.size(1), 1, 1}); }

}  // namespace

torch::Tensor pointwise_product(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                PointwiseKernel k) {
  if (!onednn_applies(x, k)) return at::linear(x, w, b);
  return nhwc(at::conv2d(nchw(x.contiguous()), kernel_1x1(w), b)).contiguous();  // (B, H, W, Cout)
}

std::pair<torch::Tensor, torch::Tensor> pointwise_grads(const torch::Tensor& grad, const torch::Tensor& x,
                                                        const torch::Tensor& w, bool input, bool weight,
                                                        PointwiseKernel k) {
  const int64_t cin = x.size(-1), cout = grad.size(-1);
  at::Tensor gx, gw;
  if (!onednn_applies(x, k) || !onednn_applies(grad, k)) {
    const at::Tensor g2 = grad.reshape({-1, cout});         // (P, Cout)
    if (input) gx = at::mm(g2, w).view(x.sizes());          // (B, H, W, Cin)
    if (weight) gw = at::mm(g2.t(), x.reshape({-1, cin}));  // (Cout, Cin)
    return {gx, gw};
  }
  auto [gi, gk, unused] =
      at::convolution_backward(nchw(grad.contiguous()), nchw(x.contiguous()), kernel_1x1(w), std::nullopt, {1, 1},
                               {0, 0}, {1, 1}, false, {0, 0}, 1, {input, weight, false});
  if (input) gx = nhwc(gi).contiguous();  // (B, H, W, Cin)
  if (weight) gw = gk.reshape({cout, cin});
  return {gx, gw};
}

CpuKind this_cpu_kind() { return {__builtin_cpu_is("amd") != 0, __builtin_cpu_supports("avx512f") != 0}; }

PointwiseKernel kernel_for_cpu(const CpuKind& cpu) {
  return cpu.amd && cpu.avx512f ? PointwiseKernel::OneDnn : PointwiseKernel::Gemm;
}

PointwiseKernel choose_pointwise_kernel(double gemm_s, double onednn_s) {
  return gemm_s > kOneDnnMargin * onednn_s ? PointwiseKernel::OneDnn : PointwiseKernel::Gemm;
}

PointwiseProbe probe_pointwise_kernels() {
  const at::NoGradGuard no_grad;
  const auto opts = at::TensorOptions().dtype(at::kFloat);
  const at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(1);  // the run's own draws stay as they were
  const int64_t c = 64, hidden = 4 * c;
  const at::Tensor x = at::randn({16, 16, 16, c}, gen, opts);  // (B, H, W, C)
  const at::Tensor w1 = at::randn({hidden, c}, gen, opts), b1 = at::randn({hidden}, gen, opts);
  const at::Tensor w2 = at::randn({c, hidden}, gen, opts), b2 = at::randn({c}, gen, opts);
  // fc1 and fc2 forward, fc2's input gradient and weight gradient, fc1's both: a block's six products.
  auto run = [&](PointwiseKernel k) {
    const at::Tensor h = pointwise_product(x, w1, b1, k);
    const at::Tensor f = pointwise_product(h, w2, b2, k);
    const auto fc2 = pointwise_grads(f, h, w2, true, true, k);
    pointwise_grads(fc2.first, x, w1, true, true, k);
  };
  auto fastest = [&](PointwiseKernel k) {
    double best = std::numeric_limits<double>::infinity();
    for (int round = 0; round < 4; ++round) {  // the first warms the kernel's code and caches up
      const auto t0 = std::chrono::steady_clock::now();
      run(k);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (round > 0) best = std::min(best, s);
    }
    return best;
  };
  PointwiseProbe p;
  for (int pass = 0; pass < 2; ++pass) {  // alternating, so a slow moment of the host hits both
    const double gemm = fastest(PointwiseKernel::Gemm), onednn = fastest(PointwiseKernel::OneDnn);
    p.gemm_s = pass == 0 ? gemm : std::min(p.gemm_s, gemm);
    p.onednn_s = pass == 0 ? onednn : std::min(p.onednn_s, onednn);
  }
  p.faster = choose_pointwise_kernel(p.gemm_s, p.onednn_s);
  return p;
}

}  // namespace halo::model
