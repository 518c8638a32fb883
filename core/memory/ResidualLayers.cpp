// Each layer is recorded on a LayerTape in the order the model's forward runs its ops, with
// the rules measured for each op (LibTorch 2.11's oneDNN on channels-last fp32 tensors):
// conv keeps its input (or its halo-extended copy), BatchNorm its input and (C) statistics,
// ReLU and sigmoid their result, max-pool its input and int64 indices; add keeps nothing.
#include "memory/ResidualLayers.h"

#include <algorithm>

#include <fmt/format.h>

#include "arch/LayerShapes.h"
#include "memory/LayerTape.h"
#include "shard/HaloPlan.h"
#include "shard/ShardingCheck.h"
#include "util/Error.h"

namespace halo::memory {

namespace {

using Id = LayerTape::Id;

// The activation a tensor holds on this rank: channels, height and its columns over the ranks.
struct Stripe {
  int64_t channels = 0, height = 0;
  shard::Partition part;
};

// oneDNN's small fixed scratch of a dense conv's forward (the same at every size).
constexpr int64_t kConvScratch = 8216;
// A strided 1x1 conv's forward gathers its strided input into a per-thread buffer.
constexpr int64_t kStridedPointwiseScratch = 24600;

// oneDNN's weight gradient of a dense conv whose input is shorter than its kernel (ResNet-18's
// layer4 on a 64-row image: 2 rows for 3) takes another algorithm: two more weight-sized
// buffers and per-image scratch (measured on LibTorch 2.11, one thread, at 1 to 28 images and
// 1 to 32 columns: 2 w + 40 (stride 1) or 13 (stride 2) x C_in x rows x columns + 384 B). On
// an AVX-512 CPU its jit:avx512_core kernel takes no such path (measured to 8 bytes, resnet18).
int64_t short_input_grad_scratch(const arch::Conv& c, int64_t height, int64_t cols, int64_t w,
                                 const ActivationInput& a) {
  if (cpu_avx512() || c.spec.groups != 1 || height >= c.spec.kernel[0]) return 0;
  const int64_t per_pixel = c.spec.stride[0] == 1 && c.spec.stride[1] == 1 ? 40 : 13;
  return 2 * w + allocated_bytes(per_pixel * c.in_channels * height * cols + 384, a);
}

class Recorder {
 public:
  Recorder(const ActivationInput& a, const Stripe& in, bool input_grad) : a_(a), tape_(bytes(in), input_grad) {}

  int64_t bytes(const Stripe& s) const {
    return allocated_bytes(a_.images * s.channels * s.height * s.part.span(a_.rank).size() * 4, a_);
  }
  int64_t vector(int64_t channels) const { return allocated_bytes(channels * 4, a_); }
  LayerTape& tape() { return tape_; }
  double flops() const { return flops_; }
  int64_t halo_bytes() const { return halo_bytes_; }

  // A conv of the layer on stripe `s` of x: plain LibTorch when its rank exchanges nothing
  // (the input is kept), else Halo's sharded conv (its halo-extended copy is kept).
  Id conv(Id x, Stripe& s, const arch::Conv& c) {
    const shard::Window win = c.spec.along_w();
    const shard::HaloPlan plan = shard::make_halo_plan(s.part, win, a_.rank, c.name.c_str());
    const Stripe out{c.out_channels, shard::output_width(s.height, c.spec.along_h()),
                     shard::output_partition(s.part, win)};
    const int64_t w = allocated_bytes(c.weight_elements() * 4, a_), y = bytes(out);
    flops_ += 2.0 * static_cast<double>(a_.images * out.height * out.part.span(a_.rank).size()) *
              static_cast<double>(c.weight_elements());
    LayerTape::Op o{.name = c.name, .reads = {x}, .out = y, .params = true};
    o.kept_grads = w + (c.bias ? vector(c.out_channels) : 0);
    if (shard::plain_padding(plan, win)) {
      o.saves = {x};
      const bool pointwise = c.spec.kernel[0] == 1 && c.spec.kernel[1] == 1;
      const bool strided = c.spec.stride[0] > 1 || c.spec.stride[1] > 1;
      if (pointwise && !strided && a_.threads == 1 && a_.images < 16) {
        o.grad_extra = w;  // LibTorch's own kernel (no oneDNN): the weight gradient only
      } else if (pointwise) {
        o.extra = w + kStridedPointwiseScratch;
        o.grad_extra = 3 * w;
      } else {  // oneDNN reorders the weight, and in backward its gradient too
        o.extra = 2 * w + (c.spec.groups == 1 ? kConvScratch : 0);
        const int64_t cols = s.part.span(a_.rank).size();
        o.grad_extra = 4 * w + short_input_grad_scratch(c, s.height, cols, w, a_);
      }
    } else {
      const int64_t per_col = a_.images * s.channels * s.height * 4;
      const auto [left, right] = plan.peer_columns();
      const int64_t received = allocated_bytes(per_col * (left + right), a_);
      const int64_t sent = allocated_bytes(per_col * sent_cols(plan), a_);
      o.keeps = allocated_bytes(per_col * plan.needed.size(), a_);  // the extended input
      // The interior's and borders' outputs before their concatenation, or the weight reorders
      // of the interior's conv while the halos travel.
      o.extra = std::max(y + received, 2 * w + kConvScratch + received + sent);
      // Backward: the extended input's gradient, then the weight gradient and its reorders
      // while the halo columns travel back; or the extended gradient beside the weight's
      // and the input's gradient (the in_grad counted by the tape).
      const int64_t in = bytes(s);
      const int64_t scratch = short_input_grad_scratch(c, s.height, plan.needed.size(), w, a_);
      o.grad_extra = tape_.needs_grad(x)
                         ? std::max(o.keeps + 4 * w + scratch + sent + received - in, o.keeps + w + sent)
                         : 4 * w + scratch;
      halo_bytes_ += per_col * (left + right) + per_col * sent_cols(plan);
    }
    s = out;
    return tape_.op(std::move(o));
  }

  // BatchNorm in training: LibTorch's fused kernel on one rank, Halo's synced one on several.
  Id batch_norm(Id x, const Stripe& s) {
    const int64_t y = bytes(s), c = vector(s.channels);
    LayerTape::Op o{.name = "bn", .reads = {x}, .out = y, .saves = {x}, .params = true};
    o.kept_grads = 2 * c;
    if (a_.sp == 1) {
      o.keeps = 2 * c;  // mean, inverse std
      o.extra = 3 * c;
      o.grad_extra = y + 2 * c;
    } else {
      o.keeps = 3 * c;  // mean, inverse std, variance
      o.extra = y + 3 * c;
      o.grad_extra = y + 3 * c;
    }
    return tape_.op(std::move(o));
  }

  Id relu(Id x, const Stripe& s) {
    return tape_.op({.name = "relu", .reads = {x}, .out = bytes(s), .saves_result = true});
  }

  Id add(Id a, Id b, const Stripe& s) {
    return tape_.op({.name = "add", .reads = {a, b}, .out = bytes(s), .passes_grad = true});
  }

  // 3x3/2 max-pool: the input (or its -inf-padded extended copy) and the int64 indices.
  Id max_pool(Id x, Stripe& s, const shard::ConvSpec& spec) {
    const shard::Window win = spec.along_w();
    const shard::HaloPlan plan = shard::make_halo_plan(s.part, win, a_.rank, "maxpool");
    Stripe out{s.channels, shard::output_width(s.height, spec.along_h()), shard::output_partition(s.part, win)};
    const int64_t y = bytes(out);
    const int64_t indices = allocated_bytes(y * 2, a_);
    Id src = x;
    if (!shard::plain_padding(plan, win)) {
      const int64_t per_col = a_.images * s.channels * s.height * 4;
      const auto [left, right] = plan.peer_columns();
      const int64_t peer = left + right, sent = sent_cols(plan);
      halo_bytes_ += per_col * (peer + sent);
      src = tape_.op({.name = "halo",
                      .reads = {x},
                      .out = allocated_bytes(per_col * plan.needed.size(), a_),
                      .extra = allocated_bytes(per_col * (peer + sent), a_),
                      .grad_extra = allocated_bytes(per_col * (peer + sent), a_),
                      .in_grads = {bytes(s)}});
    }
    const Id r = tape_.op({.name = "maxpool", .reads = {src}, .out = y, .saves = {src}, .keeps = indices});
    if (src != x) tape_.drop(src);
    s = out;
    return r;
  }

  // Squeeze-excitation: the mean over the map (B, C, 1, 1), fc1, ReLU, fc2, sigmoid, x * gate.
  Id squeeze_excite(Id x, const Stripe& s, const arch::Conv& fc1, const arch::Conv& fc2) {
    const int64_t pooled = vector(a_.images * s.channels), hidden = vector(a_.images * fc1.out_channels);
    const Id sum = tape_.op({.name = "se.sum", .reads = {x}, .out = pooled, .in_grads = {pooled}});
    const Id mean = tape_.op({.name = "se.mean", .reads = {sum}, .out = pooled});
    const int64_t w1 = allocated_bytes(fc1.weight_elements() * 4, a_),
                  w2 = allocated_bytes(fc2.weight_elements() * 4, a_);
    const Id h =
        tape_.op({.name = "se.fc1", .reads = {mean}, .out = hidden, .saves = {mean}, .grad_extra = w1, .params = true});
    const Id r = relu_small(h, hidden);
    const Id g =
        tape_.op({.name = "se.fc2", .reads = {r}, .out = pooled, .saves = {r}, .grad_extra = w2, .params = true});
    const Id gate = tape_.op({.name = "se.sigmoid", .reads = {g}, .out = pooled, .saves_result = true});
    for (Id t : {sum, mean, h, r, g}) tape_.drop(t);
    const int64_t y = bytes(s);
    // backward: dx = dy * gate, and the gate's gradient reduces dy * x (one temporary)
    return tape_.op(
        {.name = "se.mul", .reads = {x, gate}, .out = y, .saves = {x, gate}, .grad_extra = y, .in_grads = {y, pooled}});
  }

  // Global average pool (B, C) and the Linear classifier.
  Id pool_fc(Id x, const Stripe& s, const arch::Conv& fc) {
    const int64_t pooled = vector(a_.images * s.channels), logits = vector(a_.images * fc.out_channels);
    const Id sum = tape_.op({.name = "pool.sum", .reads = {x}, .out = pooled, .in_grads = {pooled}});
    const Id mean = tape_.op({.name = "pool.mean", .reads = {sum}, .out = pooled});
    tape_.drop(sum);
    const int64_t w = allocated_bytes(fc.weight_elements() * 4, a_);
    flops_ += 2.0 * static_cast<double>(a_.images * fc.weight_elements());
    const Id y =
        tape_.op({.name = "fc", .reads = {mean}, .out = logits, .saves = {mean}, .grad_extra = w, .params = true});
    tape_.drop(mean);
    return y;
  }

  // x in channels-last memory (the stem's input; an image needs no gradient): a copy, or x itself
  // when the images arrive channels-last.
  Id channels_last(Id x, const Stripe& s) {
    if (a_.image_channels_last) return x;
    return tape_.op({.name = "channels_last", .reads = {x}, .out = bytes(s)});
  }

 private:
  static int64_t sent_cols(const shard::HaloPlan& plan) {
    int64_t n = 0;
    for (const auto& t : plan.sends) n += t.columns.size();
    return n;
  }
  Id relu_small(Id x, int64_t bytes) {
    return tape_.op({.name = "relu", .reads = {x}, .out = bytes, .saves_result = true});
  }

  const ActivationInput& a_;
  LayerTape tape_;
  double flops_ = 0;
  int64_t halo_bytes_ = 0;
};

// A layer as recorded: its tape, output and the stripe it leaves, and what the step time needs.
struct Recorded {
  Recorder rec;
  Id out = 0;
  Stripe stripe;
};

// ResNet: conv1 (7x7/2), bn1, ReLU, max-pool 3x3/2, on the image in channels-last memory.
// RegNet: conv (3x3/2), bn, ReLU. The image needs no gradient.
Id stem(Recorder& r, const arch::Layer& l, Stripe& s) {
  LayerTape& t = r.tape();
  const Id xc = r.channels_last(LayerTape::input(), s);
  const bool resnet = l.kind == arch::LayerKind::ResNetStem;
  const Id c = r.conv(xc, s, l.conv(resnet ? "conv1" : "conv"));
  const Id b = r.batch_norm(c, s);
  t.drop(c);
  const bool copied = xc != LayerTape::input();
  if (resnet && copied) t.drop(xc);  // a temporary of the stem's first statement
  const Id a = r.relu(b, s);
  if (!resnet) {
    t.drop(b);
    if (copied) t.drop(xc);
    return a;
  }
  const Id y = r.max_pool(a, s, l.path.back().spec);
  t.drop(b);
  t.drop(a);
  return y;
}

// conv + BatchNorm (+ ReLU): the temporaries go when the statement ends.
Id conv_bn(Recorder& r, Id x, Stripe& s, const arch::Conv& c, bool relu) {
  const Id y = r.conv(x, s, c);
  const Id b = r.batch_norm(y, s);
  r.tape().drop(y);
  if (!relu) return b;
  const Id a = r.relu(b, s);
  r.tape().drop(b);
  return a;
}

// The shortcut (identity, or a strided 1x1 conv + BatchNorm on the block's input), the sum
// and the last ReLU.
Id residual(Recorder& r, const arch::Layer& l, Id y, const Stripe& in, Stripe& s, const char* ds_conv) {
  Id shortcut = LayerTape::input();
  for (const arch::Conv& c : l.convs)
    if (c.name == ds_conv) {
      Stripe sd = in;
      shortcut = conv_bn(r, LayerTape::input(), sd, c, false);
    }
  const Id sum = r.add(y, shortcut, s);
  const Id out = r.relu(sum, s);
  r.tape().drop(sum);
  return out;
}

Id resnet_block(Recorder& r, const arch::Layer& l, Stripe& s) {
  const Stripe in = s;
  LayerTape& t = r.tape();
  const Id r1 = conv_bn(r, LayerTape::input(), s, l.conv("conv1"), true);
  const Id c2 = r.conv(r1, s, l.conv("conv2"));
  Id y = r.batch_norm(c2, s);
  t.drop(c2);
  t.drop(r1);
  if (l.kind == arch::LayerKind::Bottleneck) {
    const Id r2 = r.relu(y, s);
    const Id c3 = r.conv(r2, s, l.conv("conv3"));
    const Id b3 = r.batch_norm(c3, s);
    for (Id d : {r2, c3, y}) t.drop(d);
    y = b3;
  }
  return residual(r, l, y, in, s, "downsample.0");
}

Id regnet_block(Recorder& r, const arch::Layer& l, Stripe& s) {
  const Stripe in = s;
  const Id r1 = conv_bn(r, LayerTape::input(), s, l.conv("conv1.conv"), true);
  const Id r2 = conv_bn(r, r1, s, l.conv("conv2.conv"), true);
  const Id se = r.squeeze_excite(r2, s, l.conv("se.fc1"), l.conv("se.fc2"));
  const Id y = conv_bn(r, se, s, l.conv("conv3.conv"), false);
  for (Id d : {r1, r2, se}) r.tape().drop(d);  // temporaries of one statement
  return residual(r, l, y, in, s, "downsample.conv");
}

LayerMemory memory_of(const arch::Layer& l, const Recorded& k, const LayerTape::Replay& p, const ActivationInput& a,
                      const Stripe& in) {
  LayerMemory m;
  m.name = l.name;
  m.stage = l.stage;
  m.block = l.kind != arch::LayerKind::ResNetStem && l.kind != arch::LayerKind::RegNetStem &&
            l.kind != arch::LayerKind::PoolFcHead;
  m.channels = k.stripe.channels;
  m.height = l.kind == arch::LayerKind::PoolFcHead ? 1 : k.stripe.height;
  m.columns = l.kind == arch::LayerKind::PoolFcHead ? 1 : k.stripe.part.span(a.rank).size();
  if (!l.path.empty()) {
    const shard::HaloPlan plan = shard::make_halo_plan(in.part, l.path.front().spec.along_w(), a.rank);
    m.halo_left = plan.halo_left();
    m.halo_right = plan.halo_right();
  }
  p.apply_to(m);
  m.halo_bytes = k.rec.halo_bytes();
  m.flops = k.rec.flops();
  m.bytes_moved = static_cast<double>(p.saved + 3 * p.out);
  return m;
}

}  // namespace

std::vector<LayerMemory> residual_layers(const arch::LayerList& layers, const ActivationInput& a) {
  const std::vector<shard::LayerWindow> windows = layers.windows();
  shard::check_shardable(windows, a.width, a.sp);  // util::Error naming the widths that do
  Stripe s{layers[0].in_channels, a.height, shard::even_partition(a.width, a.sp)};
  std::vector<Recorded> rec;
  std::vector<Stripe> inputs;
  for (const arch::Layer& l : layers) {
    inputs.push_back(s);
    const bool image = l.kind == arch::LayerKind::ResNetStem || l.kind == arch::LayerKind::RegNetStem;
    Recorded k{Recorder(a, s, !image), 0, s};
    switch (l.kind) {
      case arch::LayerKind::ResNetStem:
      case arch::LayerKind::RegNetStem:
        k.out = stem(k.rec, l, s);
        break;
      case arch::LayerKind::BasicBlock:
      case arch::LayerKind::Bottleneck:
        k.out = resnet_block(k.rec, l, s);
        break;
      case arch::LayerKind::RegNetBlock:
        k.out = regnet_block(k.rec, l, s);
        break;
      case arch::LayerKind::PoolFcHead:
        k.out = k.rec.pool_fc(LayerTape::input(), s, l.conv("fc"));
        s = {l.out_channels, 1, shard::even_partition(1, 1)};
        break;
      default:
        throw util::Error(fmt::format("layer {} ({}) is not a ResNet or RegNet layer", l.name, arch::name_of(l.kind)));
    }
    k.stripe = s;
    rec.push_back(std::move(k));
  }
  // Backward runs last to first: each layer's output gradient is what the next one returns.
  std::vector<LayerMemory> out(rec.size());
  int64_t grad = -1;
  for (size_t i = rec.size(); i-- > 0;) {
    const LayerTape::Replay p = rec[i].rec.tape().replay(rec[i].out, grad);
    out[i] = memory_of(layers[i], rec[i], p, a, inputs[i]);
    grad = p.in_grad;
  }
  return out;
}

}  // namespace halo::memory
