// The per-layer rules follow what the ops Halo calls save (derivatives.yaml and Halo's own
// autograd functions): conv keeps its halo-extended input, LayerNorm its input and stats,
// Linear and GELU their inputs, layer scale its input; residual adds keep nothing.
#include "memory/ActivationModel.h"

#include <algorithm>

#include "arch/ConvNeXtVariant.h"
#include "shard/HaloPlan.h"
#include "shard/ShardingCheck.h"

namespace halo::memory {

int64_t allocated_bytes(int64_t bytes, const ActivationInput& in) {
  if (bytes <= 0) return 0;
  const int64_t g = bytes >= (int64_t{1} << 20) ? std::max(in.round_to, in.round_large_to) : in.round_to;
  return (bytes + g - 1) / g * g;
}

namespace {

// The conv of one layer on this rank: output stripe, and the extended input it keeps.
struct ConvGeometry {
  int64_t in_cols = 0, out_cols = 0;
  int64_t ext_cols = 0;   // columns of the extended input
  bool ext_copy = false;  // more than one piece (padding or peers): a new tensor, else a view
  int64_t halo_left = 0, halo_right = 0, peer_cols = 0, sent_cols = 0;
};

ConvGeometry geometry(const shard::Partition& in, const shard::Window& w, int rank) {
  const shard::HaloPlan plan = shard::make_halo_plan(in, w, rank);
  ConvGeometry g;
  g.in_cols = plan.owned.size();
  g.out_cols = plan.outputs.size();
  g.ext_cols = plan.needed.size();
  g.ext_copy = plan.pieces.size() > 1;
  g.halo_left = plan.halo_left();
  g.halo_right = plan.halo_right();
  const auto [l, r] = plan.peer_columns();
  g.peer_cols = l + r;
  for (const auto& t : plan.sends) g.sent_cols += t.columns.size();
  return g;
}

class Builder {
 public:
  explicit Builder(const ActivationInput& in) : in_(in), a_(in.compute_bytes), half_(in.compute_bytes < 4) {}
  int64_t R(int64_t bytes) const { return allocated_bytes(bytes, in_); }
  bool cuda_half() const { return half_ && in_.device == DeviceKind::Cuda; }

  LayerMemory stem(const ConvGeometry& g, int64_t c, int64_t h_in, int64_t h) const {
    const int64_t B = in_.images, M = B * h * g.out_cols, MC = M * c;
    const int64_t stripe = B * 3 * h_in * g.in_cols;
    LayerMemory l = base("stem", -1, c, h, g);
    l.in = in_.sp > 1 ? R(stripe * 4) : 0;  // at sp=1 the stripe is the image itself
    l.saves_input = true;                   // the conv keeps its input (a view: no padding, no halo)
    if (half_) l.saved += R(stripe * a_) + R(c * 3 * 16 * a_);  // autocast copies of input and weight
    const int64_t ln_bytes = cuda_half() ? 4 : a_;
    l.saved += R(MC * a_);                               // conv output, LayerNorm's input
    if (cuda_half()) l.saved += R(MC * 4) - R(MC * a_);  // LayerNorm runs in fp32 on CUDA: keeps the copy
    l.saved += 2 * R(M * 4);                             // mean, rstd: fp32 (the LayerNorm weight is fp32)
    l.out = R(MC * ln_bytes);
    l.forward_extra = R(MC * ln_bytes) + (cuda_half() ? R(MC * a_) : 0);  // contiguous copy for layer_norm
    l.nograd_extra = l.forward_extra + R(MC * a_);
    l.backward_extra = 3 * R(MC * ln_bytes) + 2 * R(stripe * a_);  // LN copies and dX; conv input grad
    l.in_grad = 0;                                                 // images need no gradient
    l.flops = 2.0 * 3 * 16 * static_cast<double>(MC);
    l.bytes_moved = static_cast<double>(stripe * 4 + 4 * MC * ln_bytes);
    return l;
  }

  LayerMemory downsample(int stage, const ConvGeometry& g, int64_t c_in, int64_t c, int64_t h_in, int64_t h) const {
    const int64_t B = in_.images, Mi = B * h_in * g.in_cols, MCi = Mi * c_in, MC = B * h * g.out_cols * c;
    LayerMemory l = base("stages." + std::to_string(stage) + ".downsample", stage, c, h, g);
    l.in = R(MCi * 4);
    l.saves_input = true;      // LayerNorm keeps its (fp32) input
    l.saved += 2 * R(Mi * 4);  // mean, rstd
    const int64_t ext = g.ext_copy ? R(B * c_in * h_in * g.ext_cols * a_) : R(MCi * a_);
    l.saved += ext;  // the conv's input: LayerNorm's output, its autocast copy, or an extended copy
    if (half_) l.saved += R(c * c_in * 4 * a_);
    l.out = R(MC * a_);
    l.forward_extra = R(MCi * 4) + (half_ || g.ext_copy ? R(MCi * 4) : 0);
    l.nograd_extra = l.forward_extra + R(MCi * 4);
    l.backward_extra = 3 * R(MCi * 4) + R(B * c_in * h_in * g.ext_cols * a_);
    l.in_grad = R(MCi * 4);
    l.halo_bytes = B * c_in * h_in * (g.peer_cols + g.sent_cols) * a_;
    l.flops = 2.0 * static_cast<double>(c_in * 4) * static_cast<double>(MC);
    l.bytes_moved = static_cast<double>(4 * MCi * 4 + MC * a_);
    return l;
  }

  LayerMemory block(int stage, int j, const ConvGeometry& g, int64_t c, int64_t h, int64_t in_bytes) const {
    const int64_t B = in_.images, M = B * h * g.out_cols, MC = M * c;
    LayerMemory l = base("stages." + std::to_string(stage) + ".blocks." + std::to_string(j), stage, c, h, g);
    l.block = true;
    l.in = R(MC * in_bytes);
    const bool cast_in = in_bytes != a_;
    // conv_dw (7x7 depthwise, padding 3): the halo-extended input is always a new tensor.
    l.saved += g.ext_copy ? R(B * c * h * g.ext_cols * a_) : (cast_in ? R(MC * a_) : 0);
    if (!g.ext_copy && !cast_in) l.saves_input = true;
    if (half_) l.saved += R(c * 49 * a_) + R(4 * c * c * a_) * 2;  // autocast weight copies (conv_dw, fc1, fc2)
    if (cuda_half()) {
      l.saved += R(MC * 4) + 2 * R(M * 4) + R(MC * a_);  // fp32 LayerNorm input, stats, fc1's cast input
    } else {
      l.saved += R(MC * a_) + 2 * R(M * 4) + R(MC * a_);  // conv output, fp32 stats, LayerNorm output
    }
    l.saved += 2 * R(4 * MC * a_) + R(MC * a_);  // fc1 output (GELU's input), GELU output (fc2's), fc2 output (gamma's)
    if (in_.drop_path) l.saved += R(B * 4);      // the per-sample keep mask
    l.out = R(MC * 4);                           // gamma (fp32) promotes the branch: the stream stays fp32
    const int64_t ln = cuda_half() ? R(MC * 4) : R(MC * a_);
    l.forward_extra = std::max({ln + (cast_in ? R(MC * a_) : 0), R(MC * 4) * (in_.drop_path ? 2 : 1),
                                g.ext_copy && in_.sp > 1 ? R(MC * a_) : 0});
    l.nograd_extra = 2 * R(4 * MC * a_);  // fc1 and GELU outputs side by side
    // fc2's backward peaks: its input gradient beside the weight gradient that AccumulateGrad
    // adds into .grad (cast to fp32 first under autocast).
    const int64_t weight_grad = R(4 * c * c * a_) + (half_ ? R(4 * c * c * 4) : 0);
    l.backward_extra = std::max(2 * R(MC * 4) + (in_.drop_path ? R(MC * 4) : 0), R(4 * MC * a_) + weight_grad);
    l.in_grad = l.in;
    l.halo_bytes = B * c * h * (g.peer_cols + g.sent_cols) * a_;
    l.flops = 2.0 * 49 * static_cast<double>(MC) + 16.0 * static_cast<double>(M) * static_cast<double>(c * c);
    l.bytes_moved = static_cast<double>(l.saved + 3 * l.out);
    return l;
  }

  LayerMemory head(int64_t c, int64_t h, int64_t cols, int64_t classes) const {
    const int64_t B = in_.images;
    LayerMemory l;
    l.name = "head";
    l.stage = 4;
    l.channels = classes;
    l.height = 1;
    l.columns = 1;
    l.in = R(B * c * h * cols * 4);
    l.saved = R(B * c * 4) + 2 * R(B * 4) + R(B * c * 4) + (half_ ? R(classes * c * a_) : 0);
    l.out = R(B * classes * 4);
    l.forward_extra = 2 * R(B * c * 4);
    l.nograd_extra = l.forward_extra;
    l.backward_extra = 3 * R(B * c * 4);
    l.in_grad = 0;  // the gradient of a sum is an expanded view
    l.flops = 2.0 * static_cast<double>(B * c * classes);
    l.bytes_moved = static_cast<double>(l.in);
    return l;
  }

 private:
  static LayerMemory base(std::string name, int stage, int64_t c, int64_t h, const ConvGeometry& g) {
    LayerMemory l;
    l.name = std::move(name);
    l.stage = stage;
    l.channels = c;
    l.height = h;
    l.columns = g.out_cols;
    l.halo_left = g.halo_left;
    l.halo_right = g.halo_right;
    return l;
  }
  const ActivationInput& in_;
  int a_;
  bool half_;
};

int64_t out_height(int64_t h, const shard::Window& w) { return (h + 2 * w.padding - w.reach()) / w.stride + 1; }

}  // namespace

std::vector<LayerMemory> activation_layers(const ActivationInput& in) {
  const auto windows = arch::convnext_layer_windows(in.variant);
  const auto parts = shard::check_shardable(windows, in.width, in.sp);  // util::Error when it cannot shard
  const Builder b(in);
  const auto& v = in.variant;
  std::vector<LayerMemory> out;
  shard::Partition part = shard::even_partition(in.width, in.sp);
  int64_t h = in.height, stream_bytes = 4;
  for (size_t i = 0; i < windows.size(); ++i) {
    const std::string& name = windows[i].name;
    const shard::Window& w = windows[i].window;
    const ConvGeometry g = geometry(part, w, in.rank);
    const int64_t h_out = out_height(h, w);
    if (name == "stem.0") {
      out.push_back(b.stem(g, v.dims[0], h, h_out));
      stream_bytes = in.device == DeviceKind::Cuda ? 4 : in.compute_bytes;
    } else {
      const int stage = name[7] - '0';
      if (name.find("downsample") != std::string::npos) {
        out.push_back(b.downsample(stage, g, v.dims[stage - 1], v.dims[stage], h, h_out));
        stream_bytes = in.compute_bytes;
      } else {
        const int j = std::stoi(name.substr(name.find("blocks.") + 7));
        out.push_back(b.block(stage, j, g, v.dims[stage], h_out, stream_bytes));
        stream_bytes = 4;
      }
    }
    h = h_out;
    part = parts[i];
  }
  out.push_back(b.head(v.dims[3], h, part.span(in.rank).size(), in.classes));
  return out;
}

}  // namespace halo::memory
