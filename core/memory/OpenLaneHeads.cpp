// Recorded on a LayerTape in the order model::OpenLaneBaseline's forward runs its ops (fp32):
// Linear and conv keep their input, ReLU and softmax their result, LayerNorm its input and
// statistics, grid_sampler its input and grid, a product by a constant mask only the mask.
#include "memory/OpenLaneHeads.h"

#include <string>

#include "memory/LayerTape.h"

namespace halo::memory {

namespace {

using Id = LayerTape::Id;

void add(std::vector<arch::Parameter>& out, const std::string& prefix, std::vector<int64_t> weight, bool bias = true) {
  const int64_t rows = weight.front();
  out.push_back({prefix + ".weight", std::move(weight)});
  if (bias) out.push_back({prefix + ".bias", {rows}});
}

// make_mlp: Linear, ReLU, ..., Linear (Sequential indices 0, 2, 4, ...).
void mlp(std::vector<arch::Parameter>& out, const std::string& prefix, int64_t in, int64_t hidden, int64_t o,
         int64_t layers) {
  for (int64_t i = 0; i < layers; ++i)
    add(out, prefix + "." + std::to_string(2 * i), {i + 1 == layers ? o : hidden, i == 0 ? in : hidden});
}

void attention(std::vector<arch::Parameter>& out, const std::string& prefix, int64_t d) {
  out.push_back({prefix + ".in_proj_weight", {3 * d, d}});
  out.push_back({prefix + ".in_proj_bias", {3 * d}});
  add(out, prefix + ".out_proj", {d, d});
}

void detr(std::vector<arch::Parameter>& out, const std::string& prefix, const OpenLaneDims& d, int64_t queries,
          int64_t classes, int64_t reg) {
  out.push_back({prefix + ".query_embedding.weight", {queries, d.dim}});
  const std::string layer = prefix + ".decoder.layers.0";
  attention(out, layer + ".self_attn", d.dim);
  attention(out, layer + ".multihead_attn", d.dim);
  add(out, layer + ".linear1", {d.ffn, d.dim});
  add(out, layer + ".linear2", {d.dim, d.ffn});
  for (const char* n : {".norm1", ".norm2", ".norm3"}) add(out, layer + n, {d.dim});
  add(out, prefix + ".cls_branch", {classes, d.dim});
  mlp(out, prefix + ".reg_branch", d.dim, d.dim, reg, 3);
}

void topology(std::vector<arch::Parameter>& out, const std::string& prefix, const OpenLaneDims& d) {
  mlp(out, prefix + ".mlp_o1", d.dim, d.dim, d.dim, d.topology_layers);
  mlp(out, prefix + ".mlp_o2", d.dim, d.dim, d.dim, d.topology_layers);
  mlp(out, prefix + ".classifier", 2 * d.dim, d.dim, 1, d.topology_layers);
}

// The ops of the neck and heads on one rank's tape.
class HeadsRecorder {
 public:
  HeadsRecorder(const OpenLaneDims& d, int64_t batch, const LayerMemory& s16, const LayerMemory& s32,
                const ActivationInput& in)
      : d_(d), in_(in), B_(batch), tape_(s32.out, true) {
    h16_ = s16.height;
    c16_ = s16.columns;
    w16_ = in.width / 16;
    x16_ = tape_.op({.name = "stage 2 output", .params = true});  // kept by the next downsample: no new bytes
    s16_bytes_ = s16.out;
    c16_channels_ = s16.channels;
    s32_ = s32;
  }
  int64_t f(int64_t elements) const { return allocated_bytes(elements * 4, in_); }
  int64_t R(int64_t bytes) const { return allocated_bytes(bytes, in_); }
  LayerTape& tape() { return tape_; }
  double flops() const { return flops_; }

  // FPN on the stripes (1x1 laterals, nearest upsampling, the 3x3 conv), then the gather.
  Id neck() {
    const int64_t BV = in_.images, D = d_.dim, lat16_n = BV * D * h16_ * c16_;
    flops_ += 2.0 * static_cast<double>(lat16_n) * static_cast<double>(c16_channels_ + 9 * D) +
              2.0 * static_cast<double>(BV * D * s32_.height * s32_.columns * s32_.channels);
    const Id lat16 = tape_.op({.name = "lateral_convs.0",
                               .reads = {x16_},
                               .out = f(lat16_n),
                               .saves = {x16_},
                               .grad_extra = f(D * c16_channels_),
                               .in_grads = {s16_bytes_},
                               .params = true});
    const Id lat32 = tape_.op({.name = "lateral_convs.1",
                               .reads = {LayerTape::input()},
                               .out = f(BV * D * s32_.height * s32_.columns),
                               .saves = {LayerTape::input()},
                               .grad_extra = f(D * s32_.channels),
                               .params = true});
    const Id up = tape_.op({.name = "upsample", .reads = {lat32}, .out = f(lat16_n)});
    const Id sum = tape_.op({.name = "add", .reads = {lat16, up}, .out = f(lat16_n), .passes_grad = true});
    LayerTape::Op conv{.name = "fpn_convs.0", .reads = {sum}, .out = f(lat16_n), .params = true};
    const int64_t w = f(9 * D * D);
    if (in_.sp == 1) {
      conv.saves = {sum};
      conv.extra = 2 * w;
      conv.grad_extra = 4 * w;
    } else {  // the halo-extended copy (one column each side: a peer's or padding)
      const int64_t per_col = BV * D * h16_;
      conv.keeps = f(per_col * (c16_ + 2));
      conv.extra = f(per_col * 4) + 2 * w;
      conv.grad_extra = conv.keeps + 4 * w;
    }
    const Id neck = tape_.op(std::move(conv));
    for (Id t : {lat16, lat32, up, sum}) tape_.drop(t);
    if (in_.sp == 1) return neck;  // the all-gather of one rank is its input
    const int64_t most = (w16_ + in_.sp - 1) / in_.sp;
    return tape_.op({.name = "gather",
                     .reads = {neck},
                     .out = f(BV * D * h16_ * w16_),
                     .extra = f(in_.sp * BV * D * h16_ * most),  // every rank's piece before the concatenation
                     .in_grads = {f(lat16_n)}});
  }

  // IPM: every BEV cell at every height sampled from every camera, averaged, stacked, 1x1 conv, ReLU.
  Id view_transform(Id feats) {
    const int64_t BV = in_.images, D = d_.dim, P = d_.bev_x * d_.bev_y * d_.bev_z, S = d_.bev_x * d_.bev_y;
    // bilinear sampling (4 taps), the masked mean; the 1x1 conv over the stacked heights
    flops_ += 10.0 * static_cast<double>(BV * D * P) + 2.0 * static_cast<double>(B_ * S * D * D * d_.bev_z);
    // Camera geometry without grad: the points (4, P), their projections (B, V, 4, P), the
    // masks and pixel coordinates of each (B, V, P), the grid (B*V, P, 2) and its masked copy.
    const Id grid = tape_.op({.name = "ipm.grid", .out = f(BV * P * 2), .extra = f(4 * P) + f(BV * P * 10)});
    const Id valid = tape_.op({.name = "ipm.valid", .out = R(BV * P)});
    const Id sampled = tape_.op({.name = "grid_sampler",
                                 .reads = {feats, grid},
                                 .out = f(BV * D * P),
                                 .saves = {feats, grid},
                                 .in_grads = {f(BV * D * h16_ * w16_), 0}});
    const Id w = tape_.op({.name = "ipm.weight", .out = f(BV * P)});
    const Id prod = tape_.op({.name = "mul", .reads = {sampled, w}, .out = f(BV * D * P), .saves = {w}});
    const Id sum = tape_.op({.name = "sum over views", .reads = {prod}, .out = f(B_ * D * P), .passes_grad = true});
    const Id count = tape_.op({.name = "ipm.count", .out = f(B_ * P)});
    const Id den = tape_.op({.name = "clamp", .out = f(B_ * P)});
    const Id bev = tape_.op({.name = "div", .reads = {sum, den}, .out = f(B_ * D * P), .saves = {den}});
    for (Id t : {prod, sum, count, den}) tape_.drop(t);  // the statement's temporaries go at its end
    const Id proj = tape_.op({.name = "proj",
                              .reads = {bev},
                              .out = f(B_ * D * S),
                              .saves = {bev},
                              .grad_extra = f(D * D * d_.bev_z),
                              .params = true});
    const Id out = tape_.op({.name = "relu", .reads = {proj}, .out = f(B_ * D * S), .saves_result = true});
    for (Id t : {proj, sampled, w, bev, grid, valid}) tape_.drop(t);
    return out;
  }

  struct Head {
    Id logits = 0, reg = 0, decoded = 0;
  };
  // DETR: the memory plus its sine encoding, one decoder layer, the class and box branches.
  Head detr(Id memory, int64_t S, int64_t queries, int64_t classes, int64_t reg) {
    const int64_t D = d_.dim;
    const Id pos = tape_.op({.name = "position", .out = f(D * S), .extra = 3 * R(D * S * 8)});
    const Id mem =
        tape_.op({.name = "memory + pos", .reads = {memory, pos}, .out = f(B_ * D * S), .passes_grad = true});
    tape_.drop(pos);
    const Id tgt = tape_.op({.name = "query_embedding", .params = true});
    const int64_t QBD = queries * B_ * D;
    Id x = attention(tgt, tgt, queries, queries);
    x = add_norm(tgt, x, QBD);
    Id y = attention(x, mem, queries, S);
    x = add_norm(x, y, QBD);
    y = linear(x, queries * B_, D, d_.ffn);
    const Id r = relu(y, queries * B_ * d_.ffn);
    tape_.drop(y);
    y = linear(r, queries * B_, d_.ffn, D);
    tape_.drop(r);
    const Id decoded = add_norm(x, y, QBD);  // (B, Q, D): a transposed view
    tape_.drop(mem);
    Head h;
    h.decoded = decoded;
    h.logits = linear(decoded, queries * B_, D, classes);
    const Id a = mlp(decoded, queries * B_, D, reg, 3);
    h.reg = tape_.op({.name = "sigmoid", .reads = {a}, .out = f(queries * B_ * reg), .saves_result = true});
    tape_.drop(a);
    return h;
  }

  // Pair logits (B, N, M): each side's MLP, their expanded concatenation, the classifier MLP.
  Id topology(Id a, Id b, int64_t n, int64_t m) {
    const int64_t D = d_.dim, L = d_.topology_layers;
    const Id ea = mlp(a, B_ * n, D, D, L), eb = mlp(b, B_ * m, D, D, L);
    const Id pairs = tape_.op(
        {.name = "pairs", .reads = {ea, eb}, .out = f(B_ * n * m * 2 * D), .in_grads = {f(B_ * n * D), f(B_ * m * D)}});
    const Id out = mlp(pairs, B_ * n * m, 2 * D, 1, L);
    for (Id t : {ea, eb, pairs}) tape_.drop(t);
    return out;
  }

  // The seven weighted losses (matching runs without grad): their scalar sum.
  Id loss(const std::vector<Id>& outputs) { return tape_.op({.name = "loss", .reads = outputs, .out = R(4)}); }

 private:
  // x (rows, in) -> (rows, out)
  Id linear(Id x, int64_t rows, int64_t in, int64_t out) {
    flops_ += 2.0 * static_cast<double>(rows * in * out);
    return tape_.op({.name = "linear",
                     .reads = {x},
                     .out = f(rows * out),
                     .saves = {x},
                     .grad_extra = f(in * out),
                     .params = true});
  }
  Id relu(Id x, int64_t elements) {
    return tape_.op({.name = "relu", .reads = {x}, .out = f(elements), .saves_result = true});
  }
  // Linear, ReLU, ..., Linear over `rows` vectors.
  Id mlp(Id x, int64_t rows, int64_t in, int64_t out, int64_t layers) {
    const int64_t D = d_.dim;
    Id cur = x;
    for (int64_t i = 0; i < layers; ++i) {
      const bool last = i + 1 == layers;
      const int64_t o = last ? out : D;
      const Id y = linear(cur, rows, i == 0 ? in : D, o);
      if (cur != x) tape_.drop(cur);
      if (last) return y;
      cur = relu(y, rows * o);
      tape_.drop(y);
    }
    return cur;
  }
  // LibTorch's multi_head_attention_forward: projections, scaled queries, contiguous keys and
  // values per head, softmax(q k^T) v, the output projection.
  Id attention(Id query, Id kv, int64_t q_len, int64_t k_len) {
    const int64_t D = d_.dim, QBD = q_len * B_ * D, KBD = k_len * B_ * D, A = B_ * d_.heads * q_len * k_len;
    const Id q = linear(query, q_len * B_, D, D);
    const Id kvp = linear(kv, k_len * B_, D, 2 * D);
    flops_ += 2.0 * 2.0 * static_cast<double>(A * (D / d_.heads)) + 2.0 * static_cast<double>(QBD * D);
    const Id qs = tape_.op({.name = "scale", .reads = {q}, .out = f(QBD)});
    const Id v = tape_.op({.name = "v", .reads = {kvp}, .out = f(KBD), .in_grads = {f(2 * KBD)}});
    const Id k = tape_.op({.name = "k", .reads = {kvp}, .out = f(KBD), .in_grads = {0}});
    tape_.drop(kvp);
    tape_.drop(q);
    const Id a = tape_.op({.name = "bmm", .reads = {qs, k}, .out = f(A), .saves = {qs, k}});
    const Id p = tape_.op({.name = "softmax", .reads = {a}, .out = f(A), .saves_result = true});
    tape_.drop(a);
    const Id o = tape_.op({.name = "bmm", .reads = {p, v}, .out = f(QBD), .saves = {p, v}});
    const Id oc = tape_.op({.name = "contiguous", .reads = {o}, .out = f(QBD)});
    tape_.drop(o);
    // The averaged attention weights nobody reads: (B, H, Q, S) summed over heads, divided.
    const Id out = tape_.op({.name = "out_proj",
                             .reads = {oc},
                             .out = f(QBD),
                             .saves = {oc},
                             .extra = 2 * f(B_ * q_len * k_len),
                             .grad_extra = f(D * D),
                             .params = true});
    for (Id t : {qs, k, v, p, oc}) tape_.drop(t);
    return out;
  }
  // x + y, LayerNorm (input and the (rows) mean and rstd kept).
  Id add_norm(Id x, Id y, int64_t elements) {
    const Id s = tape_.op({.name = "add", .reads = {x, y}, .out = f(elements), .passes_grad = true});
    const int64_t rows = elements / d_.dim;
    const Id n = tape_.op({.name = "layer_norm",
                           .reads = {s},
                           .out = f(elements),
                           .saves = {s},
                           .keeps = 2 * f(rows),
                           .grad_extra = f(elements),
                           .params = true});
    tape_.drop(s);
    tape_.drop(y);
    return n;
  }

  const OpenLaneDims& d_;
  const ActivationInput& in_;
  int64_t B_;
  LayerTape tape_;
  int64_t h16_ = 0, c16_ = 0, w16_ = 0, s16_bytes_ = 0, c16_channels_ = 0;
  LayerMemory s32_;
  Id x16_ = 0;
  double flops_ = 0;
};

}  // namespace

std::vector<arch::Parameter> openlane_head_parameters(const OpenLaneDims& d, int64_t c16, int64_t c32) {
  std::vector<arch::Parameter> out;
  add(out, "img_neck.lateral_convs.0", {d.dim, c16, 1, 1});
  add(out, "img_neck.lateral_convs.1", {d.dim, c32, 1, 1});
  add(out, "img_neck.fpn_convs.0", {d.dim, d.dim, 3, 3});
  add(out, "img_view_transformer.proj", {d.dim, d.dim * d.bev_z, 1, 1});
  detr(out, "lc_head", d, d.lane_queries, 1, d.control_points * 3);
  detr(out, "te_head", d, d.te_queries, d.te_classes, 4);
  topology(out, "lclc_head", d);
  topology(out, "lcte_head", d);
  return out;
}

LayerMemory openlane_heads_layer(const OpenLaneDims& d, int64_t batch, const LayerMemory& s16, const LayerMemory& s32,
                                 const ActivationInput& in) {
  HeadsRecorder r(d, batch, s16, s32, in);
  const Id feats = r.neck();
  const Id bev = r.view_transform(feats);
  const auto lane = r.detr(bev, d.bev_x * d.bev_y, d.lane_queries, 1, d.control_points * 3);
  // The TE head reads the front camera's full-width stride-16 map.
  const auto te = r.detr(feats, s16.height * (in.width / 16), d.te_queries, d.te_classes, 4);
  const Id lclc = r.topology(lane.decoded, lane.decoded, d.lane_queries, d.lane_queries);
  const Id lcte = r.topology(lane.decoded, te.decoded, d.lane_queries, d.te_queries);
  const Id loss = r.loss({lane.logits, lane.reg, te.logits, te.reg, lclc, lcte});
  const LayerTape::Replay p = r.tape().replay(loss);
  LayerMemory l;
  l.name = "neck_and_heads";
  l.stage = 4;
  l.channels = 1;
  l.height = 1;
  l.columns = 1;
  p.apply_to(l);
  l.flops = r.flops();
  l.bytes_moved = static_cast<double>(p.saved + p.forward_extra);
  return l;
}

}  // namespace halo::memory
