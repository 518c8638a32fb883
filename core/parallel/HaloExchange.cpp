// Halo gather/scatter over Communicator::exchange, and the autograd function built on them.
// Every rank posts the same sequence of exchanges: forward gathers, backward scatters.
#include "parallel/HaloExchange.h"

#include <torch/torch.h>

#include "parallel/PlanCapsule.h"

namespace halo::parallel {

namespace {

std::vector<int64_t> shape_with_width(const at::Tensor& t, int64_t w) {
  std::vector<int64_t> s(t.sizes().begin(), t.sizes().end());
  s.back() = w;
  return s;
}

at::Tensor columns(const at::Tensor& t, int64_t offset, int64_t width) { return t.narrow(-1, offset, width); }

// The wire layout of a piece: a 4-D map travels in channels-last byte order, (B, H, w, C)
// contiguous, the order the extended input and the halo gradients are built in. From a
// channels-last source (as Backbone makes the maps) packing, landing and adding then copy
// runs of C values instead of transposing. Both ends derive the order from the dimension
// alone, so they agree without a word.
bool channels_last_wire(const at::Tensor& t) { return halo_memory_format(t) == at::MemoryFormat::ChannelsLast; }

// A contiguous buffer holding `piece`'s values in wire order (what a Send posts). Where the
// piece already is one (a whole channels-last stripe) it is a view, not a copy: the source
// must not change before the exchange's wait.
at::Tensor to_wire(const at::Tensor& piece) {
  return channels_last_wire(piece) ? piece.permute({0, 2, 3, 1}).contiguous() : piece.contiguous();
}

// An empty piece of `like`'s shape with width w, laid out in wire order (what the receiver
// reads), and its wire buffer, a view of the same memory (what a Recv posts).
std::pair<at::Tensor, at::Tensor> wire_buffer(const at::Tensor& like, int64_t w) {
  const at::Tensor piece = at::empty(shape_with_width(like, w), like.options().memory_format(halo_memory_format(like)));
  return {to_wire(piece), piece};
}

}  // namespace

at::MemoryFormat halo_memory_format(const at::Tensor& t) {
  return t.dim() == 4 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
}

HaloGather::HaloGather(Communicator& comm, const shard::HaloPlan& plan, const at::Tensor& x) : plan_(plan), x_(x) {
  std::vector<P2POp> ops;
  for (const shard::Piece& p : plan.pieces) {
    if (p.source != shard::Piece::Source::Peer) continue;
    auto [wire, view] = wire_buffer(x, p.columns.size());
    received_.push_back(view);
    ops.push_back({P2POp::Kind::Recv, p.peer, wire});
  }
  for (const shard::Transfer& t : plan.sends)
    ops.push_back(
        {P2POp::Kind::Send, t.peer, to_wire(columns(x, t.columns.begin - plan.owned.begin, t.columns.size()))});
  pending_ = comm.exchange(std::move(ops));
}

at::Tensor HaloGather::finish(double fill) {
  pending_.wait();
  if (plan_.pieces.size() == 1 && plan_.pieces.front().source == shard::Piece::Source::Local) {
    const shard::Piece& p = plan_.pieces.front();
    return columns(x_, p.columns.begin - plan_.owned.begin, p.columns.size());
  }
  // One write per piece into the extended input, no intermediate concatenation.
  at::Tensor ext = at::empty(shape_with_width(x_, plan_.needed.size()),
                             x_.options().memory_format(halo_memory_format(x_)));  // (B, C, H, needed)
  size_t next = 0;
  for (const shard::Piece& p : plan_.pieces) {
    at::Tensor dst = columns(ext, plan_.offset(p.columns.begin), p.columns.size());
    switch (p.source) {
      case shard::Piece::Source::Pad:
        dst.fill_(fill);
        break;
      case shard::Piece::Source::Local:
        dst.copy_(columns(x_, p.columns.begin - plan_.owned.begin, p.columns.size()));
        break;
      case shard::Piece::Source::Peer:
        dst.copy_(received_[next++]);
        break;
    }
  }
  return ext;
}

HaloScatter::HaloScatter(Communicator& comm, const shard::HaloPlan& plan, const at::Tensor& grad_ext)
    : plan_(plan), grad_ext_(grad_ext) {
  std::vector<P2POp> ops;
  for (const shard::Transfer& t : plan.sends) {
    auto [wire, view] = wire_buffer(grad_ext, t.columns.size());
    returned_.push_back(view);
    ops.push_back({P2POp::Kind::Recv, t.peer, wire});
  }
  for (const shard::Piece& p : plan.pieces)
    if (p.source == shard::Piece::Source::Peer)
      ops.push_back(
          {P2POp::Kind::Send, p.peer, to_wire(columns(grad_ext, plan.offset(p.columns.begin), p.columns.size()))});
  pending_ = comm.exchange(std::move(ops));
}

at::Tensor HaloScatter::finish() {
  pending_.wait();
  const auto layout = grad_ext_.options().memory_format(halo_memory_format(grad_ext_));
  const shard::Piece* whole = nullptr;  // a local piece that covers every owned column
  for (const shard::Piece& p : plan_.pieces)
    if (p.source == shard::Piece::Source::Local && p.columns.begin <= plan_.owned.begin &&
        p.columns.end >= plan_.owned.end)
      whole = &p;
  at::Tensor grad;  // (B, C, H, owned)
  if (whole) {
    grad = at::empty(shape_with_width(grad_ext_, plan_.owned.size()), layout);
    grad.copy_(columns(grad_ext_, plan_.offset(plan_.owned.begin), plan_.owned.size()));
  } else {
    grad = at::zeros(shape_with_width(grad_ext_, plan_.owned.size()), layout);
    for (const shard::Piece& p : plan_.pieces)
      if (p.source == shard::Piece::Source::Local)
        columns(grad, p.columns.begin - plan_.owned.begin, p.columns.size())
            .add_(columns(grad_ext_, plan_.offset(p.columns.begin), p.columns.size()));
  }
  for (size_t i = 0; i < plan_.sends.size(); ++i) {
    const shard::Span c = plan_.sends[i].columns;
    columns(grad, c.begin - plan_.owned.begin, c.size()).add_(returned_[i]);
  }
  return grad;
}

namespace {

class HaloExtendFunction : public torch::autograd::Function<HaloExtendFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            c10::intrusive_ptr<PlanCapsule> cap, double fill) {
    ctx->saved_data["plan"] = c10::IValue::make_capsule(cap);
    HaloGather g(*cap->comm, cap->plan, x);
    return g.finish(fill);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto cap = ctx->saved_data["plan"].toCapsule();
    auto* pc = static_cast<PlanCapsule*>(cap.get());
    HaloScatter s(*pc->comm, pc->plan, grads[0].contiguous(halo_memory_format(grads[0])));
    return {s.finish(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor halo_extend(const at::Tensor& x, const shard::HaloPlan& plan, std::shared_ptr<Communicator> comm,
                       double fill) {
  // Skip autograd only when this rank neither receives nor sends (peers then expect nothing).
  if (plan.is_local() && plan.sends.empty() && plan.needed == plan.owned) return x;
  auto cap = c10::make_intrusive<PlanCapsule>(plan, std::move(comm));
  return HaloExtendFunction::apply(x, cap, fill);
}

}  // namespace halo::parallel
