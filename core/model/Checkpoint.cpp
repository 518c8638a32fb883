// Reentrant checkpointing in C++ (torch.utils.checkpoint's reentrant variant): the inner
// backward runs inside the outer one; CPU (and CUDA) RNG states replay stochastic depth.
#include "model/Checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#ifdef HALO_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#endif

#include "model/AutocastScope.h"

namespace halo::model {

const char* to_string(CheckpointLevel l) {
  switch (l) {
    case CheckpointLevel::None:
      return "none";
    case CheckpointLevel::Block:
      return "block";
    case CheckpointLevel::Stage:
      return "stage";
  }
  return "?";
}

namespace {

thread_local int recompute_depth = 0;        // > 0 while a segment reruns inside backward
thread_local bool recompute_unread = false;  // ... one whose output's values nothing reads

struct Recomputing {
  explicit Recomputing(bool output_unread) : was_unread(recompute_unread) {
    ++recompute_depth;
    recompute_unread = output_unread;
  }
  ~Recomputing() {
    --recompute_depth;
    recompute_unread = was_unread;
  }
  bool was_unread;
};

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct SegmentCapsule : torch::CustomClassHolder {
  SegmentCapsule(Segment s, shard::Partition p, std::shared_ptr<parallel::Communicator> g, bool unread)
      : segment(std::move(s)), part(std::move(p)), group(std::move(g)), output_unread(unread) {}
  Segment segment;
  shard::Partition part, out_part;
  std::shared_ptr<parallel::Communicator> group;
  bool output_unread = false;  // the recompute's output values are not read (only its graph)
  at::Tensor cpu_rng;
  bool cuda = false;
  at::Tensor cuda_rng;
  // The forward's autocast state, re-entered for the recompute (as torch.utils.checkpoint
  // does): the backward runs after the trainer's autocast scope has ended.
  bool autocast = false;
  at::ScalarType autocast_dtype = at::kFloat;
};

class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, c10::intrusive_ptr<SegmentCapsule> cap) {
    at::Generator cpu_gen = at::detail::getDefaultCPUGenerator();
    cap->cpu_rng = cpu_gen.get_state();
#ifdef HALO_WITH_CUDA
    if (x.is_cuda()) {
      cap->cuda = true;
      at::Generator g = at::cuda::detail::getDefaultCUDAGenerator(x.device().index());
      cap->cuda_rng = g.get_state();
    }
#endif
    cap->autocast = at::autocast::is_autocast_enabled(x.device().type());
    cap->autocast_dtype = at::autocast::get_autocast_dtype(x.device().type());
    parallel::ShardedTensor y = cap->segment({x, cap->part, cap->group});  // grad mode is off here
    cap->out_part = y.part;
    ctx->save_for_backward({x});
    ctx->saved_data["cap"] = c10::IValue::make_capsule(cap);
    return y.local;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto holder = ctx->saved_data["cap"].toCapsule();
    auto* cap = static_cast<SegmentCapsule*>(holder.get());
    at::Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    at::Generator cpu_gen = at::detail::getDefaultCPUGenerator();
    const at::Tensor cpu_now = cpu_gen.get_state();
    cpu_gen.set_state(cap->cpu_rng);
#ifdef HALO_WITH_CUDA
    at::Tensor cuda_now;
    if (cap->cuda) {
      at::Generator g = at::cuda::detail::getDefaultCUDAGenerator(x.device().index());
      cuda_now = g.get_state();
      g.set_state(cap->cuda_rng);
    }
#endif
    at::Tensor y;
    {
      at::AutoGradMode enable(true);
      const AutocastScope autocast(x.device().type(), cap->autocast, cap->autocast_dtype);
      const Recomputing recomputing(cap->output_unread);
      y = cap->segment({x, cap->part, cap->group}).local;
    }
    cpu_gen.set_state(cpu_now);
#ifdef HALO_WITH_CUDA
    if (cap->cuda) {
      at::Generator g = at::cuda::detail::getDefaultCUDAGenerator(x.device().index());
      g.set_state(cuda_now);
    }
#endif
    torch::autograd::backward({y}, {grads[0]});
    return {x.grad(), at::Tensor()};
  }
};

}  // namespace

bool recomputing() { return recompute_depth > 0; }

bool recompute_output_unread() { return recompute_depth > 0 && recompute_unread; }

parallel::ShardedTensor checkpointed(const Segment& segment, const parallel::ShardedTensor& x, bool output_unread) {
  auto cap = c10::make_intrusive<SegmentCapsule>(segment, x.part, x.group, output_unread);
  at::Tensor y = CheckpointFunction::apply(x.local, cap);
  return {y, cap->out_part, x.group};
}

parallel::ShardedTensor checkpointed_residual(const Segment& branch, const parallel::ShardedTensor& x,
                                              bool output_unread) {
  const auto dev = x.local.device().type();
  const at::Tensor cast = at::autocast::is_autocast_enabled(dev) && x.local.is_floating_point()
                              ? x.local.to(at::autocast::get_autocast_dtype(dev))  // x itself when already so
                              : x.local;
  const parallel::ShardedTensor b = checkpointed(branch, x.with(cast), output_unread);
  return b.with(b.local + x.local);  // (B, C, H, W/world), as the block's own forward adds
}

}  // namespace halo::model
