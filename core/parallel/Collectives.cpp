// Autograd functions for the placement changes; communicator and sizes travel in a capsule.
// All ranks call them in the same order (identical graphs), so collectives always match.
#include "parallel/Collectives.h"

#include <torch/torch.h>

#include "parallel/PlanCapsule.h"

namespace halo::parallel {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct GroupCapsule : torch::CustomClassHolder {
  GroupCapsule(std::shared_ptr<Communicator> g, shard::Partition p) : group(std::move(g)), part(std::move(p)) {}
  std::shared_ptr<Communicator> group;
  shard::Partition part;
};

GroupCapsule* capsule(AutogradContext* ctx) {
  return static_cast<GroupCapsule*>(ctx->saved_data["g"].toCapsule().get());
}

std::vector<int64_t> widths(const shard::Partition& p) {
  std::vector<int64_t> w;
  for (const shard::Span& s : p.spans()) w.push_back(s.size());
  return w;
}

template <bool SumGrad>
class AllReduceFunction : public torch::autograd::Function<AllReduceFunction<SumGrad>> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, c10::intrusive_ptr<GroupCapsule> cap) {
    ctx->saved_data["g"] = c10::IValue::make_capsule(cap);
    at::Tensor y = x.clone(at::MemoryFormat::Contiguous);
    cap->group->all_reduce_sum(y);
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    at::Tensor g = grads[0];
    if constexpr (SumGrad) {
      g = g.clone(at::MemoryFormat::Contiguous);
      capsule(ctx)->group->all_reduce_sum(g);
    }
    return {g, at::Tensor()};
  }
};

class GatherWidthFunction : public torch::autograd::Function<GatherWidthFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, c10::intrusive_ptr<GroupCapsule> cap) {
    ctx->saved_data["g"] = c10::IValue::make_capsule(cap);
    return cap->group->all_gather_cat(x.contiguous(), -1, widths(cap->part));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* cap = capsule(ctx);
    const shard::Span mine = cap->part.span(cap->group->rank());
    return {grads[0].narrow(-1, mine.begin, mine.size()).contiguous(), at::Tensor()};
  }
};

class ScatterWidthFunction : public torch::autograd::Function<ScatterWidthFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& full, c10::intrusive_ptr<GroupCapsule> cap) {
    ctx->saved_data["g"] = c10::IValue::make_capsule(cap);
    const shard::Span mine = cap->part.span(cap->group->rank());
    return full.narrow(-1, mine.begin, mine.size()).contiguous();
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* cap = capsule(ctx);
    return {cap->group->all_gather_cat(grads[0].contiguous(), -1, widths(cap->part)), at::Tensor()};
  }
};

}  // namespace

at::Tensor sum_to_replicated(const at::Tensor& partial, std::shared_ptr<Communicator> group) {
  return AllReduceFunction<false>::apply(partial,
                                         c10::make_intrusive<GroupCapsule>(std::move(group), shard::Partition()));
}

at::Tensor sum_partials(const at::Tensor& partial, std::shared_ptr<Communicator> group) {
  return AllReduceFunction<true>::apply(partial,
                                        c10::make_intrusive<GroupCapsule>(std::move(group), shard::Partition()));
}

at::Tensor gather_width(const ShardedTensor& x) {
  return GatherWidthFunction::apply(x.local, c10::make_intrusive<GroupCapsule>(x.group, x.part));
}

ShardedTensor scatter_width(const at::Tensor& full, const shard::Partition& part, std::shared_ptr<Communicator> group) {
  at::Tensor local = ScatterWidthFunction::apply(full, c10::make_intrusive<GroupCapsule>(group, part));
  return {local, part, std::move(group)};
}

}  // namespace halo::parallel
