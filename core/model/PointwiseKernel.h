// Which CPU kernels a ConvNeXt block's per-pixel products (fc1, fc2 and their gradients) run on:
// MKL's GEMM through at::mm, or oneDNN's 1x1 convolution, and a probe that times both here.
#pragma once

#include <torch/types.h>

#include <utility>

namespace halo::model {

enum class PointwiseKernel {
  Gemm,    // at::linear / at::mm on (pixels, channels) rows: MKL's sgemm on the CPU, cuBLAS on CUDA
  OneDnn,  // the same products as 1x1 convolutions on channels-last (B, C, H, W): oneDNN on the CPU
};

// The products on (B, H, W, C) rows. Gemm gives the plain ops' bits; OneDnn the same values to
// fp32's rounding. OneDnn applies to fp32 CPU tensors of four dimensions only; anything else
// (float64, bf16, CUDA) takes Gemm.
// x (B, H, W, Cin), w (Cout, Cin), b (Cout) or undefined -> (B, H, W, Cout)
torch::Tensor pointwise_product(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                PointwiseKernel k);
// grad (B, H, W, Cout) of pointwise_product(x, w, .): d/dx (B, H, W, Cin) if input, d/dw
// (Cout, Cin) if weight; the other undefined.
std::pair<torch::Tensor, torch::Tensor> pointwise_grads(const torch::Tensor& grad, const torch::Tensor& x,
                                                        const torch::Tensor& w, bool input, bool weight,
                                                        PointwiseKernel k);

// What parallel.pointwise cpu reads of this CPU: MKL's GEMM has no AVX-512 code for AMD CPUs
// (it runs its AVX2 code there), where oneDNN's 1x1 convolution does.
struct CpuKind {
  bool amd = false;
  bool avx512f = false;
};
CpuKind this_cpu_kind();

// OneDnn on an AMD CPU with AVX-512 (measured: 2.1-2.3x MKL's GEMM on Zen 5, 0.97-1.2x on Zen 4),
// Gemm elsewhere (even on Zen 3, AVX2; MKL's own code on Intel). A pure function of the kind, so
// every run on one host takes the same kernel whatever the host's load.
PointwiseKernel kernel_for_cpu(const CpuKind& cpu);

// OneDnn is chosen only when the probe finds it this much faster: two kernels within a quiet
// host's noise of each other keep Gemm (a loaded host can still tip it; parallel.pointwise
// auto is not the default for that reason).
inline constexpr double kOneDnnMargin = 1.3;

struct PointwiseProbe {
  double gemm_s = 0, onednn_s = 0;  // the fastest of a few rounds of the probe's products, each kernel
  PointwiseKernel faster = PointwiseKernel::Gemm;
};

// The kernel for a probe's times: OneDnn when gemm_s > kOneDnnMargin * onednn_s.
PointwiseKernel choose_pointwise_kernel(double gemm_s, double onednn_s);

// Times fc1- and fc2-shaped products and their gradients (16 x 16 x 16 pixels, 64 <-> 256
// channels, fp32) with each kernel on this CPU at the current thread count. About 8 MB for
// tens of milliseconds: run it before training, not inside a step.
PointwiseProbe probe_pointwise_kernels();

}  // namespace halo::model
