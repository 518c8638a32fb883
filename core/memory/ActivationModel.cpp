// The per-layer rules follow what the ops Halo calls save (derivatives.yaml and Halo's own
// autograd functions): conv keeps its halo-extended input, LayerNorm its input and stats,
// Linear and GELU their inputs, layer scale its input; residual adds keep nothing.
#include "memory/ActivationModel.h"

#include <algorithm>

#include <fmt/format.h>

#include "arch/LayerShapes.h"
#include "memory/ResidualLayers.h"
#include "shard/HaloPlan.h"
#include "util/Error.h"

namespace halo::memory {

int64_t allocated_bytes(int64_t bytes, const ActivationInput& in) {
  if (bytes <= 0) return 0;
  const int64_t g = bytes >= (int64_t{1} << 20) ? std::max(in.round_to, in.round_large_to) : in.round_to;
  return (bytes + g - 1) / g * g;
}

bool cpu_avx512() {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
}

namespace {

// The across-W conv of one layer on this rank: output stripe, and the extended input it keeps.
struct ConvGeometry {
  int64_t in_cols = 0, out_cols = 0;
  int64_t ext_cols = 0;   // columns of the extended input
  bool ext_copy = false;  // more than one piece (padding or peers): a new tensor, else a view
  bool plain = false;     // nothing to exchange: plain conv2d on the (NCHW) stripe
  int64_t halo_left = 0, halo_right = 0, peer_cols = 0, sent_cols = 0;
};

ConvGeometry geometry(const arch::LayerShape& s, int rank) {
  const arch::RankShape& r = s.ranks.at(static_cast<size_t>(rank));
  ConvGeometry g;
  g.in_cols = r.in.size();
  g.out_cols = r.out.size();
  // A rank that exchanges nothing runs plain conv2d (parallel/ShardedConv): it keeps its own
  // input, and the padding stays inside the conv.
  const bool plain = shard::plain_padding(r.plan, s.window).has_value();
  g.ext_cols = plain ? g.in_cols : r.plan.needed.size();
  g.ext_copy = !plain && r.plan.pieces.size() > 1;
  g.plain = plain;
  g.halo_left = r.plan.halo_left();
  g.halo_right = r.plan.halo_right();
  g.peer_cols = r.halo_left + r.halo_right;
  for (const auto& t : r.plan.sends) g.sent_cols += t.columns.size();
  return g;
}

// oneDNN's weight gradient of a grouped conv on NCHW input on an AVX-512 CPU (its
// jit:avx512_core kernel, LibTorch 2.11): a reduction scratchpad of 256 copies of the fp32
// weight, measured (convnext_test's 7x7 depthwise convs: 256 x C x 49 x 4 bytes at every
// width); AVX2 kernels and the channels-last extended inputs of exchanging ranks need none,
// nor the depthwise convs whose gradient Halo sums itself (fp32, fp64, bf16).
int64_t cpu_grouped_weight_grad_scratch(const arch::Conv& conv, bool plain, int64_t compute_bytes) {
  if (!cpu_avx512() || !plain || conv.spec.groups == 1) return 0;
  if (conv.spec.direct_depthwise_grad(conv.in_channels, conv.out_channels, compute_bytes)) return 0;
  return 256 * conv.weight_elements() * 4;
}

class Builder {
 public:
  explicit Builder(const ActivationInput& in) : in_(in), a_(in.compute_bytes), half_(in.compute_bytes < 4) {}
  int64_t R(int64_t bytes) const { return allocated_bytes(bytes, in_); }
  bool cuda_half() const { return half_ && in_.device == DeviceKind::Cuda; }
  // A ConvNeXt block's fp32 branch beside its output (and drop path's scaled copy).
  int64_t scaled_branch(int64_t MC) const { return R(MC * 4) * (in_.drop_path ? 2 : 1); }
  // Layer scale's backward: both fp32 products (the branch's gradient, gamma's before its
  // sum), and drop path's gradient before them.
  int64_t scale_backward(int64_t MC) const { return 2 * R(MC * 4) + (in_.drop_path ? R(MC * 4) : 0); }

  // Patch conv (fp32 image in), LayerNorm2d.
  LayerMemory stem(const arch::Layer& layer, const arch::LayerShape& s) const {
    const ConvGeometry g = geometry(s, in_.rank);
    const arch::Conv& conv = layer.convs.at(*layer.across_w);
    const int64_t c = layer.out_channels, B = in_.images, M = B * s.height * g.out_cols, MC = M * c;
    const int64_t stripe = B * conv.in_channels * s.in_height * g.in_cols;
    LayerMemory l = base(layer, s, g);
    l.in = R(stripe * 4);    // the image itself at sp=1
    l.saves_input = !half_;  // the conv keeps its input (a view: no padding, no halo) or, under
    if (half_) l.saved += R(stripe * a_) + R(conv.weight_elements() * a_);  // autocast, copies of it and the weight
    const int64_t ln_bytes = cuda_half() ? 4 : a_;
    l.saved += R(MC * a_);                               // conv output, LayerNorm's input
    if (cuda_half()) l.saved += R(MC * 4) - R(MC * a_);  // LayerNorm runs in fp32 on CUDA: keeps the copy
    l.saved += 2 * R(M * 4);                             // mean, rstd: fp32 (the LayerNorm weight is fp32)
    l.out = R(MC * ln_bytes);
    // A channels-last image gives a channels-last conv output, which layer_norm reads in place;
    // an NCHW one is copied for it in forward, and again with its gradient in backward.
    const bool in_place = in_.image_channels_last;
    l.forward_extra = (in_place ? 0 : R(MC * ln_bytes)) + (cuda_half() ? R(MC * a_) : 0);
    l.nograd_extra = l.forward_extra + R(MC * a_);
    l.backward_extra = (in_place ? 1 : 3) * R(MC * ln_bytes);  // (LN's copies and) dX; the image needs no gradient
    l.in_grad = 0;                                             // images need no gradient
    l.flops = 2.0 * static_cast<double>(M * conv.weight_elements());
    l.bytes_moved = static_cast<double>(stripe * 4 + 4 * MC * ln_bytes);
    return l;
  }

  // LayerNorm2d (fp32 stream in), then the strided conv.
  LayerMemory downsample(const arch::Layer& layer, const arch::LayerShape& s) const {
    const ConvGeometry g = geometry(s, in_.rank);
    const arch::Conv& conv = layer.convs.at(*layer.across_w);
    const int64_t c_in = layer.in_channels, h_in = s.in_height;
    const int64_t B = in_.images, Mi = B * h_in * g.in_cols, MCi = Mi * c_in, M = B * s.height * g.out_cols;
    LayerMemory l = base(layer, s, g);
    l.in = R(MCi * 4);
    l.saves_input = true;      // LayerNorm keeps its (fp32) input
    l.saved += 2 * R(Mi * 4);  // mean, rstd
    const int64_t ext = g.ext_copy ? R(B * c_in * h_in * g.ext_cols * a_) : R(MCi * a_);
    l.saved += ext;  // the conv's input: LayerNorm's output, its autocast copy, or an extended copy
    if (half_) l.saved += R(conv.weight_elements() * a_);
    l.out = R(M * layer.out_channels * a_);
    l.forward_extra = R(MCi * 4) + (half_ || g.ext_copy ? R(MCi * 4) : 0);
    l.nograd_extra = l.forward_extra + R(MCi * 4);
    l.backward_extra = 3 * R(MCi * 4) + R(B * c_in * h_in * g.ext_cols * a_);
    l.in_grad = R(MCi * 4);
    l.halo_bytes = B * c_in * h_in * (g.peer_cols + g.sent_cols) * a_;
    l.flops = 2.0 * static_cast<double>(M) * static_cast<double>(conv.weight_elements());
    l.bytes_moved = static_cast<double>(4 * MCi * 4 + M * layer.out_channels * a_);
    return l;
  }

  // conv_dw, LayerNorm, fc1 (hidden), GELU, fc2, layer scale, residual; in_bytes: the dtype of
  // conv_dw's input, residual_bytes: the residual's (the stream's; 0: in_bytes).
  LayerMemory block(const arch::Layer& layer, const arch::LayerShape& s, int64_t in_bytes,
                    int64_t residual_bytes = 0) const {
    const ConvGeometry g = geometry(s, in_.rank);
    const arch::Conv &dw = layer.conv("conv_dw"), &fc1 = layer.conv("mlp.fc1"), &fc2 = layer.conv("mlp.fc2");
    const int64_t c = layer.out_channels, h = s.height, B = in_.images, M = B * h * g.out_cols, MC = M * c;
    const int64_t MH = M * layer.hidden;
    LayerMemory l = base(layer, s, g);
    l.block = true;
    l.recompute_peaks_after_grads = true;
    l.in = R(MC * in_bytes);
    const bool cast_in = in_bytes != a_;
    // conv_dw (padded along W): the halo-extended input is a new tensor.
    l.saved += g.ext_copy ? R(B * c * h * g.ext_cols * a_) : (cast_in ? R(MC * a_) : 0);
    if (!g.ext_copy && !cast_in) l.saves_input = true;
    if (in_.recompute_cheap)
      return lean_block(l, layer, g, M, cast_in, (residual_bytes ? residual_bytes : in_bytes) < 4);
    // autocast's weight copies of the Linears (saved with grad; without, held until fc2 returns)
    const int64_t fc_casts = half_ ? R(fc1.weight_elements() * a_) + R(fc2.weight_elements() * a_) : 0;
    if (half_) l.saved += R(dw.weight_elements() * a_) + fc_casts;  // and conv_dw's
    if (cuda_half()) {
      l.saved += R(MC * 4) + 2 * R(M * 4) + R(MC * a_);  // fp32 LayerNorm input, stats, fc1's cast input
    } else {
      l.saved += R(MC * a_) + 2 * R(M * 4) + R(MC * a_);  // conv output, fp32 stats, LayerNorm output
    }
    l.saved += 2 * R(MH * a_) + R(MC * a_);  // fc1 output (GELU's input), GELU output (fc2's), fc2 output (gamma's)
    if (in_.drop_path) l.saved += R(B * 4);  // the per-sample keep mask
    l.out = R(MC * 4);                       // gamma (fp32) promotes the branch: the stream stays fp32
    const int64_t ln = cuda_half() ? R(MC * 4) : R(MC * a_);
    l.forward_extra =
        std::max({ln + (cast_in ? R(MC * a_) : 0), scaled_branch(MC), g.ext_copy && in_.sp > 1 ? R(MC * a_) : 0});
    // Without grad nothing is saved, but one expression holds conv_dw's output, LayerNorm's,
    // fc1's, GELU's and fc2's (and under autocast the Linears' weight casts) until fc2 returns.
    l.nograd_extra = std::max(2 * R(MC * a_) + ln + 2 * R(MH * a_) + fc_casts - l.out, scaled_branch(MC));
    // fc2's backward peaks: its input gradient beside the weight gradient that AccumulateGrad
    // adds into .grad (cast to fp32 first under autocast). Layer scale's beside conv_dw's
    // scratch, or under autocast beside the branch gradient's cast.
    const int64_t fc2_w = fc2.weight_elements();
    const int64_t weight_grad = R(fc2_w * a_) + (half_ ? R(fc2_w * 4) : 0);
    const int64_t dw_scratch = in_.device == DeviceKind::Cpu ? R(cpu_grouped_weight_grad_scratch(dw, g.plain, a_)) : 0;
    l.backward_extra =
        std::max(scale_backward(MC) + std::max(dw_scratch, half_ ? R(MC * a_) : 0), R(MH * a_) + weight_grad);
    l.in_grad = l.in;
    l.halo_bytes = B * c * h * (g.peer_cols + g.sent_cols) * a_;
    l.flops = 2.0 * static_cast<double>(M * dw.weight_elements()) +
              2.0 * static_cast<double>(M) * static_cast<double>(fc1.weight_elements() + fc2.weight_elements());
    l.bytes_moved = static_cast<double>(l.saved + 3 * l.out);
    return l;
  }

  // parallel.recompute cheap (model::block_pointwise): beside conv_dw's input, the block keeps
  // conv_dw's output (a) and fc1's (4C, a); LayerNorm and GELU run again in backward.
  LayerMemory lean_block(LayerMemory l, const arch::Layer& layer, const ConvGeometry& g, int64_t M, bool cast_in,
                         bool residual_half) const {
    const arch::Conv &dw = layer.conv("conv_dw"), &fc1 = layer.conv("mlp.fc1"), &fc2 = layer.conv("mlp.fc2");
    const int64_t MC = M * layer.out_channels, MH = M * layer.hidden;
    if (half_) l.saved += R(dw.weight_elements() * a_);  // conv_dw's autocast weight copy
    l.saved += R(MC * a_) + R(MH * a_);
    if (in_.drop_path) l.saved += R(in_.images * 4);
    l.out = R(MC * 4);
    const int64_t ln = cuda_half() ? R(MC * 4) : 0;  // LayerNorm's fp32 input on CUDA
    // LayerNorm's output (and its cast) beside fc1's; then GELU's beside fc2's; then the branch
    // beside the block's output (and drop path's scaled copy).
    // Under autocast each Linear's weight is cast just before its product and freed after it.
    const int64_t fc1_cast = half_ ? R(fc1.weight_elements() * a_) : 0;
    const int64_t fc2_cast = half_ ? R(fc2.weight_elements() * a_) : 0;
    const int64_t norm_fc1 = ln + R(MC * (cuda_half() ? 4 : a_)) + (half_ && cuda_half() ? R(MC * a_) : 0) +
                             (cast_in ? R(MC * a_) : 0) + fc1_cast - l.out;
    const int64_t branch = std::max(scaled_branch(MC), g.ext_copy && in_.sp > 1 ? R(MC * a_) : 0);
    l.forward_extra = std::max({norm_fc1, R(MH * a_) + fc2_cast + R(MC * a_) - l.out, branch});
    l.recompute_forward_extra = std::max(norm_fc1, branch);  // no GELU, no fc2: the branch is zeros
    l.nograd_extra = 2 * R(MH * a_);
    const int64_t fc_w = fc1.weight_elements() + fc2.weight_elements();
    const int64_t dw_scratch = in_.device == DeviceKind::Cpu ? R(cpu_grouped_weight_grad_scratch(dw, g.plain, a_)) : 0;
    // The output gradient's channels-last copy and the layer-scaled one (in the compute dtype)
    // beside fc1's gradient (4C) and the weight gradients (under autocast also the Linears'
    // weights cast again and their gradients before the fp32 cast); then fc1's gradient beside
    // the recomputed LayerNorm output and its input gradient (on the CPU in the compute dtype).
    const int64_t norm_pair = 2 * R(MC * (cuda_half() ? 4 : a_));
    // Under autocast the weights' casts (both Linears) stay to the end, where the weight
    // gradients in the compute dtype sit beside their fp32 casts; before that fc2's M beside
    // fc1's gradient, and where the residual is in the compute dtype (the first block after a
    // downsample) the residual's gradient cast to it (measured: blocks on the fp32 stream hold
    // none).
    const int64_t residual_grad = residual_half ? R(MC * a_) : 0;
    // Under fp16 M is formed in fp32 (model::block_pointwise: fp16 lacks its range) from an fp32
    // copy of GELU's output, beside the fp16 one and without a copy of the output gradient;
    // fc2's weight gradient is then M itself, and only fc1's has a compute-dtype copy at the return.
    const int64_t fc2_w = fc2.weight_elements();
    const int64_t fc_m =
        residual_grad + R(MH * a_) + R(fc_w * a_) + (in_.fp16 ? R(MH * 4) + R(fc2_w * 4) : R(MC * 4) + R(fc2_w * a_));
    const int64_t fc_return = R(fc_w * a_) + (in_.fp16 ? R(fc1.weight_elements() * a_) : R(fc_w * a_)) +
                              R(MC * (cuda_half() ? 4 : a_));  // beside the fp32 gradients
    const int64_t norm_back = R(MH * a_) + norm_pair + ln;
    const int64_t dw_back = scale_backward(MC) + dw_scratch;
    if (half_) {
      l.backward_extra = std::max({fc_m, fc_return + R(fc_w * 4), norm_back, dw_back});
      // Recomputed, the simulator adds the block's new gradients to what runs after them.
      l.recompute_backward_extra = std::max(fc_m, norm_back);
      l.after_grads_extra = std::max(fc_return, dw_back);
      l.returned_grads = R(fc_w * 4);
    } else {
      l.backward_extra = std::max({R(MC * 4) + R(MC * a_) + R(MH * a_) + R(fc_w * 4), norm_back, dw_back});
    }
    l.in_grad = l.in;
    l.flops = 2.0 * static_cast<double>(M * dw.weight_elements()) +
              2.0 * static_cast<double>(M) * static_cast<double>(fc_w);         // no matmul runs twice
    l.bytes_moved = static_cast<double>(l.saved + 3 * l.out + 2 * R(MH * a_));  // and GELU's again
    return l;
  }

  // Global average pool of the last stripes (h x cols on this rank), LayerNorm, Linear.
  LayerMemory head(const arch::Layer& layer, int64_t h, int64_t cols) const {
    const arch::Conv& fc = layer.conv("fc");
    const int64_t B = in_.images, c = layer.in_channels, classes = layer.out_channels;
    LayerMemory l;
    l.name = layer.name;
    l.stage = layer.stage;
    l.channels = classes;
    l.height = 1;
    l.columns = 1;
    l.in = R(B * c * h * cols * 4);
    l.saved = R(B * c * 4) + 2 * R(B * 4) + R(B * c * 4) + (half_ ? R(fc.weight_elements() * a_) : 0);
    l.out = R(B * classes * 4);
    l.forward_extra = 2 * R(B * c * 4);
    l.nograd_extra = l.forward_extra;
    l.backward_extra = 3 * R(B * c * 4);
    l.in_grad = 0;  // the gradient of a sum is an expanded view
    l.flops = 2.0 * static_cast<double>(B * fc.weight_elements());
    l.bytes_moved = static_cast<double>(l.in);
    return l;
  }

 private:
  static LayerMemory base(const arch::Layer& layer, const arch::LayerShape& s, const ConvGeometry& g) {
    LayerMemory l;
    l.name = layer.name;
    l.stage = layer.stage;
    l.channels = layer.out_channels;
    l.height = s.height;
    l.columns = g.out_cols;
    l.halo_left = g.halo_left;
    l.halo_right = g.halo_right;
    return l;
  }
  const ActivationInput& in_;
  int a_;
  bool half_;
};

}  // namespace

std::vector<LayerMemory> activation_layers(const ActivationInput& in) {
  const arch::LayerList& layers = in.layers;
  if (layers.size() > 0 &&
      (layers[0].kind == arch::LayerKind::ResNetStem || layers[0].kind == arch::LayerKind::RegNetStem))
    return residual_layers(layers, in);
  // util::Error when the width cannot shard
  const std::vector<arch::LayerShape> shapes = arch::layer_shapes(layers, in.height, in.width, in.sp);
  const Builder b(in);
  std::vector<LayerMemory> out;
  auto shape = shapes.begin();
  int64_t stream_bytes = 4;  // dtype of the activation stream entering the next layer
  for (const arch::Layer& l : layers) {
    switch (l.kind) {
      case arch::LayerKind::PatchStem:
        out.push_back(b.stem(l, *shape++));
        stream_bytes = in.device == DeviceKind::Cuda ? 4 : in.compute_bytes;
        break;
      case arch::LayerKind::NormConvDownsample:
        out.push_back(b.downsample(l, *shape++));
        stream_bytes = in.compute_bytes;
        break;
      case arch::LayerKind::ConvNeXtBlock:
        out.push_back(b.block(l, *shape, stream_bytes));
        if (stream_bytes != in.compute_bytes) {
          LayerMemory cast = b.block(l, *shape, in.compute_bytes, stream_bytes);
          if (!cast.after_grads_extra) cast.recompute_backward_extra = cast.backward_extra;
          out.back().on_cast_input = std::make_shared<const LayerMemory>(std::move(cast));
        }
        ++shape;
        stream_bytes = 4;
        break;
      case arch::LayerKind::NormMlpHead:
        out.push_back(b.head(l, shapes.back().height, shapes.back().out.span(in.rank).size()));
        break;
      default:
        throw util::Error(fmt::format("layer {} ({}) is not a ConvNeXt layer", l.name, arch::name_of(l.kind)));
    }
  }
  for (LayerMemory& l : out)
    if (!l.after_grads_extra) l.recompute_backward_extra = l.backward_extra;
  return out;
}

}  // namespace halo::memory
