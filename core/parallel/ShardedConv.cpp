// Sharded convolution as one autograd function: forward gathers halos (overlapped with the
// interior), backward computes the input gradient first and returns its halo part to the
// owners while the weight gradient is computed.
#include "parallel/ShardedConv.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <chrono>
#include <optional>

#include "parallel/DepthwiseWeightGrad.h"
#include "parallel/ExchangeClock.h"
#include "parallel/HaloExchange.h"
#include "parallel/PlanCapsule.h"

namespace halo::parallel {

namespace {

struct ConvCapsule : PlanCapsule {
  ConvCapsule(shard::HaloPlan p, std::shared_ptr<Communicator> c, shard::ConvSpec s, ShardedConvOptions o)
      : PlanCapsule(std::move(p), std::move(c)), spec(s), overlap(o.overlap), label(std::move(o.label)) {}
  shard::ConvSpec spec;
  bool overlap;
  std::string label;
};

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

at::Tensor conv(const at::Tensor& in, const at::Tensor& w, const at::Tensor& b, const shard::ConvSpec& s) {
  return at::conv2d(in, w, b, {s.stride[0], s.stride[1]}, {s.padding[0], 0}, {s.dilation[0], s.dilation[1]}, s.groups);
}

// Output columns [o0, o1) computed from the extended input (columns from plan.needed.begin).
at::Tensor conv_range(const at::Tensor& ext, int64_t ext_begin, int64_t o0, int64_t o1, const at::Tensor& w,
                      const at::Tensor& b, const shard::ConvSpec& s) {
  const shard::Window win = s.along_w();
  const shard::Span in = shard::input_needed({o0, o1}, win);
  return conv(ext.narrow(-1, in.begin - ext_begin, in.size()), w, b, s);
}

// d loss / d weight and d loss / d bias (undefined without one) of a conv over `in`: the direct
// depthwise sum where it applies (a fifth of oneDNN's time, no scratchpad), else oneDNN's.
std::pair<at::Tensor, at::Tensor> weight_grads(const at::Tensor& g, const at::Tensor& in, const at::Tensor& weight,
                                               bool has_bias, const std::vector<int64_t>& stride,
                                               const std::vector<int64_t>& pad, const std::vector<int64_t>& dil,
                                               int64_t groups) {
  DepthwiseGeometry geo;
  for (int k = 0; k < 2; ++k) {
    geo.stride[k] = stride[static_cast<size_t>(k)];
    geo.padding[k] = pad[static_cast<size_t>(k)];
    geo.dilation[k] = dil[static_cast<size_t>(k)];
  }
  if (weight.scalar_type() == in.scalar_type())
    if (auto gw = depthwise_weight_grad(g, in, weight.sizes(), groups, geo))
      return {*gw, has_bias ? g.sum({0, 2, 3}) : at::Tensor()};
  const std::vector<int64_t> outpad{0, 0};
  auto [unused_x, grad_w, grad_b] = at::convolution_backward(
      g, in, weight, has_bias ? std::optional<at::IntArrayRef>(at::IntArrayRef{weight.size(0)}) : std::nullopt, stride,
      pad, dil, false, outpad, groups, {false, true, has_bias});
  return {grad_w, has_bias ? grad_b : at::Tensor()};
}

// An unsharded depthwise conv (nothing to exchange) whose weight gradient weight_grads sums
// directly; forward and input gradient are LibTorch's own.
class DepthwiseConvFunction : public torch::autograd::Function<DepthwiseConvFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias_in, std::vector<int64_t> stride, std::vector<int64_t> pad,
                            std::vector<int64_t> dil) {
    const at::Tensor bias = bias_in.numel() > 0 ? bias_in : at::Tensor();
    ctx->save_for_backward({x, weight});
    ctx->saved_data["stride"] = stride;
    ctx->saved_data["pad"] = pad;
    ctx->saved_data["dil"] = dil;
    ctx->saved_data["has_bias"] = bias.defined();
    return at::conv2d(x, weight, bias, stride, pad, dil, weight.size(0));  // (B, C, H', W')
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1];
    const auto stride = ctx->saved_data["stride"].toIntVector(), pad = ctx->saved_data["pad"].toIntVector(),
               dil = ctx->saved_data["dil"].toIntVector();
    const bool has_bias = ctx->saved_data["has_bias"].toBool();
    const at::Tensor g = grads[0].contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor grad_x;
    if (ctx->needs_input_grad(0))
      grad_x = std::get<0>(at::convolution_backward(g, x, weight, std::nullopt, stride, pad, dil, false, {0, 0},
                                                    weight.size(0), {true, false, false}));
    auto [grad_w, grad_b] = weight_grads(g, x, weight, has_bias, stride, pad, dil, weight.size(0));
    return {grad_x, grad_w, grad_b, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

class ShardedConvFunction : public torch::autograd::Function<ShardedConvFunction> {
 public:
  // bias: (Cout), or an empty tensor for none (a custom function's inputs must be defined).
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias_in, c10::intrusive_ptr<ConvCapsule> cap) {
    const at::Tensor bias = bias_in.numel() > 0 ? bias_in : at::Tensor();
    const shard::HaloPlan& plan = cap->plan;
    const shard::ConvSpec& s = cap->spec;
    const shard::Window win = s.along_w();
    auto t0 = clock_type::now();
    HaloGather gather(*cap->comm, plan, x);
    double exchange = seconds_since(t0);  // posting; the wait is timed below
    at::Tensor out;
    // Interior: outputs whose window lies inside this rank's own columns.
    int64_t i0 = plan.outputs.begin, i1 = plan.outputs.begin;
    if (cap->overlap && !plan.sends.empty()) {
      i0 = std::max(plan.outputs.begin, (plan.owned.begin + win.padding + win.stride - 1) / win.stride);
      i1 = std::min(plan.outputs.end, (plan.owned.end - win.reach() + win.padding) / win.stride + 1);
      if (plan.owned.end - win.reach() + win.padding < 0) i1 = i0;
    }
    at::Tensor interior;
    if (i1 > i0) interior = conv_range(x, plan.owned.begin, i0, i1, weight, bias, s);
    t0 = clock_type::now();
    at::Tensor ext = gather.finish(0.0);
    ExchangeClock::add(cap->label, exchange + seconds_since(t0));
    if (i1 > i0) {
      std::vector<at::Tensor> parts;
      if (i0 > plan.outputs.begin)
        parts.push_back(conv_range(ext, plan.needed.begin, plan.outputs.begin, i0, weight, bias, s));
      parts.push_back(interior);
      if (plan.outputs.end > i1)
        parts.push_back(conv_range(ext, plan.needed.begin, i1, plan.outputs.end, weight, bias, s));
      out = parts.size() == 1 ? parts.front() : at::cat(parts, -1);
    } else {
      out = conv(ext, weight, bias, s);
    }
    ctx->save_for_backward({ext, weight});
    ctx->saved_data["cap"] = c10::IValue::make_capsule(cap);
    ctx->saved_data["has_bias"] = bias.defined();
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor& ext = saved[0];
    const at::Tensor& weight = saved[1];
    auto holder = ctx->saved_data["cap"].toCapsule();
    auto* cap = static_cast<ConvCapsule*>(holder.get());
    const bool has_bias = ctx->saved_data["has_bias"].toBool();
    const shard::ConvSpec& s = cap->spec;
    at::Tensor g = grads[0].contiguous(halo_memory_format(grads[0]));  // as ext, for one kernel layout
    const std::vector<int64_t> stride{s.stride[0], s.stride[1]}, pad{s.padding[0], 0},
        dil{s.dilation[0], s.dilation[1]}, outpad{0, 0};
    // The input's gradient and its halo return only where the input needs one (not an image).
    const bool input_grad = ctx->needs_input_grad(0);
    at::Tensor grad_ext;
    std::optional<HaloScatter> scatter;
    auto t0 = clock_type::now();
    double posting = 0;
    if (input_grad) {
      grad_ext = std::get<0>(at::convolution_backward(g, ext, weight, std::nullopt, stride, pad, dil, false, outpad,
                                                      s.groups, {true, false, false}));
      t0 = clock_type::now();
      scatter.emplace(*cap->comm, cap->plan, grad_ext);
      posting = seconds_since(t0);
    }
    auto [grad_w, grad_b] = weight_grads(g, ext, weight, has_bias, stride, pad, dil, s.groups);
    at::Tensor grad_x;
    if (scatter) {
      t0 = clock_type::now();
      grad_x = scatter->finish();
      ExchangeClock::add(cap->label, posting + seconds_since(t0));
    }
    return {grad_x, grad_w, grad_b, at::Tensor()};
  }
};

}  // namespace

bool oneDNN_strided_pointwise_fault(const at::Tensor& x, const shard::ConvSpec& s) {
  const bool pointwise = s.kernel[0] == 1 && s.kernel[1] == 1 && s.padding[0] == 0 && s.padding[1] == 0;
  return pointwise && (s.stride[0] > 1 || s.stride[1] > 1) && x.dim() == 4 && x.size(1) < 16 && x.is_cpu() &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast) && !x.is_contiguous();
}

ShardedTensor sharded_conv2d(const ShardedTensor& x, const at::Tensor& weight, const at::Tensor& bias,
                             const shard::ConvSpec& spec, ShardedConvOptions opts) {
  const shard::Window win = spec.along_w();
  shard::HaloPlan plan = shard::make_halo_plan(x.part, win, x.rank(), "conv2d");
  shard::Partition out = shard::output_partition(x.part, win);
  if (const auto pad = shard::plain_padding(plan, win)) {
    // Nothing to exchange: plain LibTorch (no padding copy, one fused backward). Autocast, if
    // on, casts inside at::conv2d as it does for any conv.
    if (oneDNN_strided_pointwise_fault(x.local, spec)) {  // the same conv on the strided pixels
      const at::Tensor sub =
          x.local.slice(2, 0, std::nullopt, spec.stride[0]).slice(3, 0, std::nullopt, spec.stride[1]);
      const std::vector<int64_t> one{1, 1}, zero{0, 0};
      at::Tensor y = at::conv2d(sub, weight, bias, one, zero, one, spec.groups);  // (B, Cout, H', W'/world)
      return {y, std::move(out), x.group};
    }
    const std::vector<int64_t> stride{spec.stride[0], spec.stride[1]}, padding{spec.padding[0], *pad},
        dilation{spec.dilation[0], spec.dilation[1]};
    const bool training = at::GradMode::is_enabled() && (x.local.requires_grad() || weight.requires_grad());
    const auto dev = x.local.device().type();
    // Under autocast the depthwise conv runs on the casts autocast would make (its weight
    // gradient summed directly too: oneDNN's bf16 one keeps hundreds of weight copies).
    const bool cast = at::autocast::is_autocast_enabled(dev);
    const at::Tensor in = training && cast ? x.local.to(at::autocast::get_autocast_dtype(dev)) : x.local;
    if (training && depthwise_grad_applies(in, weight.sizes(), spec.groups) &&
        (cast || weight.scalar_type() == in.scalar_type())) {
      const at::Tensor w = weight.to(in.scalar_type());
      const at::Tensor b = bias.defined() ? bias.to(in.scalar_type()) : at::empty({0}, w.options());
      return {DepthwiseConvFunction::apply(in, w, b, stride, padding, dilation), std::move(out), x.group};
    }
    at::Tensor y = at::conv2d(in, weight, bias, stride, padding, dilation, spec.groups);  // (B, Cout, H', W'/world)
    return {y, std::move(out), x.group};
  }
  auto cap = c10::make_intrusive<ConvCapsule>(std::move(plan), x.group, spec, std::move(opts));
  at::Tensor in = x.local, w = weight, b = bias;
  // Autocast: cast outside the autograd function (differentiably), as autocast would for conv2d.
  const auto dev = in.device().type();
  if (at::autocast::is_autocast_enabled(dev)) {
    const auto dt = at::autocast::get_autocast_dtype(dev);
    in = in.to(dt);
    w = w.to(dt);
    if (b.defined()) b = b.to(dt);
  }
  if (!b.defined()) b = at::empty({0}, w.options());         // no bias
  at::Tensor y = ShardedConvFunction::apply(in, w, b, cap);  // (B, Cout, H', W'/world)
  return {y, std::move(out), x.group};
}

}  // namespace halo::parallel
