// Forward and backward of the per-pixel branch by hand, autocast's casts made explicit: saved
// are y (C per pixel) and fc1's output (4C; without its bias where GELU adds it); the plain ops
// keep 11C (y, LayerNorm's output, fc1's and GELU's outputs, fc2's output) plus LayerNorm's
// statistics. A checkpoint's recompute stops at fc1: nothing reads its output's values.
#include "model/BlockPointwise.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/autograd.h>

#include "model/Gelu.h"
#include "model/LayerNormBackward.h"

namespace halo::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The dtype the Linears and GELU run in: autocast's when it is on, else y's own.
at::ScalarType compute_dtype(const at::Tensor& y) {
  const auto device = y.device().type();
  return at::autocast::is_autocast_enabled(device) ? at::autocast::get_autocast_dtype(device) : y.scalar_type();
}

// LayerNorm's input as autocast gives it: fp32 on CUDA, y itself on CPU (where autocast runs
// layer_norm in the input's dtype, mixed with fp32 weights).
at::Tensor norm_input(const at::Tensor& y) {
  return y.is_cuda() && y.scalar_type() != at::kFloat && y.scalar_type() != at::kDouble ? y.to(at::kFloat) : y;
}

// LayerNorm of y as the plain block runs it: (output, mean, rstd).
std::tuple<at::Tensor, at::Tensor, at::Tensor> norm(const at::Tensor& y, const at::Tensor& w, const at::Tensor& b,
                                                    double eps) {
  return at::native_layer_norm(norm_input(y), {y.size(-1)}, w, b, eps);
}

// Whether fc1's bias is added by GELU's own loops as they read fc1's output (fp32 GEMMs on the
// CPU), not by addmm: addmm first copies the bias into every output row, a pass over 4C per pixel.
// oneDNN adds it inside its convolution; other dtypes keep addmm's rounding.
bool bias_in_gelu(PointwiseKernel k, at::ScalarType a, const at::Tensor& y) {
  return k == PointwiseKernel::Gemm && a == at::kFloat && y.is_cpu();
}

struct BlockPointwiseFunction : public torch::autograd::Function<BlockPointwiseFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& y_in, const at::Tensor& norm_w,
                            const at::Tensor& norm_b, const at::Tensor& fc1_w, const at::Tensor& fc1_b,
                            const at::Tensor& fc2_w, const at::Tensor& fc2_b, const at::Tensor& gamma, double eps,
                            int64_t dtype, int64_t kernel, bool output_unread) {
    const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const auto a = static_cast<at::ScalarType>(dtype);
    const auto k = static_cast<PointwiseKernel>(kernel);
    // Kept channels-last contiguous (conv_dw's NCHW output goes): LayerNorm reads it in place.
    const at::Tensor y = y_in.contiguous();
    const bool late_bias = bias_in_gelu(k, a, y);
    at::Tensor h;  // (..., 4C) fc1's output, GELU's input (without fc1's bias where GELU adds it)
    {
      const at::Tensor n = std::get<0>(norm(y, norm_w, norm_b, eps));  // (..., C)
      h = pointwise_product(n.to(a), fc1_w.flatten(1).to(a), late_bias ? at::Tensor() : fc1_b.to(a), k);
    }
    ctx->save_for_backward({y, h, norm_w, norm_b, fc1_w, fc2_w, fc2_b, gamma, fc1_b});
    ctx->saved_data["eps"] = eps;
    ctx->saved_data["dtype"] = dtype;
    ctx->saved_data["kernel"] = kernel;
    if (output_unread) return at::zeros(y.sizes(), y.options().dtype(c10::promoteTypes(a, gamma.scalar_type())));
    const at::Tensor f = pointwise_product(model::gelu(h, late_bias ? fc1_b.to(a) : at::Tensor()),
                                           fc2_w.flatten(1).to(a), fc2_b.to(a), k);  // (..., C)
    return f * gamma;  // gamma (fp32) promotes: the stream stays fp32
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &y = saved[0], &h = saved[1], &norm_w = saved[2], &norm_b = saved[3];
    const at::Tensor &fc1_w = saved[4], &fc2_w = saved[5], &fc2_b = saved[6], &gamma = saved[7], &fc1_b = saved[8];
    const double eps = ctx->saved_data["eps"].toDouble();
    const auto a = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    const auto k = static_cast<PointwiseKernel>(ctx->saved_data["kernel"].toInt());
    const int64_t c = y.size(-1), hidden = h.size(-1);
    const at::Tensor w1 = fc1_w.flatten(1).to(a), w2 = fc2_w.flatten(1).to(a);
    at::Tensor grad_gamma, grad_fc2_w, grad_fc2_b, grad_h, grad_fc1_b;
    {                                                   // the output gradient's copies go before LayerNorm runs again
      const at::Tensor go = grads[0].reshape({-1, c});  // (P, C) d loss / d out
      at::Tensor gf = (go * gamma).to(a);               // (P, C) d loss / d fc2's output
      grad_fc2_b = gf.sum(0);
      // (..., 4C) d loss / d GELU's output, then d loss / d h; h becomes gelu(h)
      grad_h = pointwise_grads(gf.reshape(y.sizes()), h, w2, true, false, k).first;
      gf.reset();        // freed before M's copies: the planner's peak holds no gf
      at::Tensor g = h;  // (..., 4C) the saved h itself: backward runs once
      const at::Tensor bias = bias_in_gelu(k, a, y) ? fc1_b.to(a) : at::Tensor();
      grad_fc1_b = gelu_backward_keep_value_(grad_h, g, bias);  // fc1's bias gradient from the same pass
      // fc2's weight gradient without gamma, M = go^T gelu(h): it gives fc2's weight gradient
      // (gamma * M) and gamma's (sum_k W2 * M + b2 * sum_p go). Under bf16 autocast M is formed in
      // bf16 from go's bf16 copy (an eighth of an fp32 copy of GELU's output; bf16 has fp32's
      // range); otherwise in the gradient's dtype (fp16's range would not hold M: it lacks gamma).
      const auto md = a == at::kBFloat16 ? a : go.scalar_type();
      at::Tensor m = k == PointwiseKernel::Gemm  // (C, 4C)
                         ? at::mm(go.to(md).t(), g.reshape({-1, hidden}).to(md))
                         : pointwise_grads(go.to(md).reshape(y.sizes()), g.to(md), w2.to(md), false, true, k).second;
      const at::Tensor w2_used = w2.to(md), b2_used = fc2_b.to(a).to(go.scalar_type());
      grad_gamma = (w2_used * m).sum(1, false, go.scalar_type()) + b2_used * go.sum(0);
      grad_fc2_w = m.mul_(gamma.to(m.scalar_type()).unsqueeze(1)).view(fc2_w.sizes());
    }
    auto [n, mean, rstd] = norm(y, norm_w, norm_b, eps);  // recomputed: the same values as forward's
    auto [grad_n_a, grad_w1] = pointwise_grads(grad_h, n.to(a), w1, true, true, k);
    const at::Tensor grad_fc1_w = grad_w1.view(fc1_w.sizes());
    const at::Tensor grad_n = grad_n_a.to(n.scalar_type()).view(n.sizes());  // (..., C)
    grad_n_a.reset();
    grad_h = at::Tensor();
    n = at::Tensor();
    // Halo's row split on more than one thread (model/LayerNormBackward.h). y's normalised copy
    // (a cast under CUDA autocast) is a temporary, gone before the return's casts.
    auto [grad_x, grad_norm_w, grad_norm_b] = layer_norm_backward(grad_n, norm_input(y), mean, rstd, norm_w, norm_b);
    const auto as = [](const at::Tensor& g, const at::Tensor& like) { return g.to(like.scalar_type()); };
    return {as(grad_x, y),
            as(grad_norm_w, norm_w),
            as(grad_norm_b, norm_b),
            as(grad_fc1_w, fc1_w),
            as(grad_fc1_b, fc1_w),
            as(grad_fc2_w, fc2_w),
            as(grad_fc2_b, fc2_b),
            as(grad_gamma, gamma),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

torch::Tensor block_pointwise(const torch::Tensor& y, const BlockPointwiseWeights& w, bool output_unread) {
  return BlockPointwiseFunction::apply(y, w.norm_weight, w.norm_bias, w.fc1_weight, w.fc1_bias, w.fc2_weight,
                                       w.fc2_bias, w.gamma, w.eps, static_cast<int64_t>(compute_dtype(y)),
                                       static_cast<int64_t>(w.kernel), output_unread);
}

}  // namespace halo::model
