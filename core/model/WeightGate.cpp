// Two identity autograd functions bracket a gated block: Enter before it (forward: gather;
// backward: release) and Leave after it (forward: release; backward: gather).
#include "model/WeightGate.h"

#include <mutex>
#include <utility>

#include <torch/torch.h>

namespace halo::model {

namespace {

std::mutex gate_mutex;
std::shared_ptr<WeightGate> open_gate;  // guarded by gate_mutex

std::shared_ptr<WeightGate> current() {
  const std::lock_guard<std::mutex> lock(gate_mutex);
  return open_gate;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct GateCapsule : torch::CustomClassHolder {
  GateCapsule(std::shared_ptr<WeightGate> g, std::string u) : gate(std::move(g)), unit(std::move(u)) {}
  std::shared_ptr<WeightGate> gate;
  std::string unit;
};

void act(WeightGate& gate, const std::string& unit, bool gather, bool backward) {
  if (gather)
    gate.gather(unit, backward);
  else
    gate.release(unit);
}

// enter: forward gathers, backward releases; otherwise the other way round.
template <bool kEnter>
class GateFunction : public torch::autograd::Function<GateFunction<kEnter>> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, c10::intrusive_ptr<GateCapsule> cap) {
    act(*cap->gate, cap->unit, kEnter, /*backward=*/false);
    ctx->saved_data["cap"] = c10::IValue::make_capsule(cap);
    return x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto holder = ctx->saved_data["cap"].toCapsule();
    auto* cap = static_cast<GateCapsule*>(holder.get());
    act(*cap->gate, cap->unit, !kEnter, /*backward=*/true);
    return {grads[0], at::Tensor()};
  }
};

at::Tensor pass(bool enter, const std::shared_ptr<WeightGate>& gate, const std::string& unit, const at::Tensor& x) {
  if (!at::GradMode::is_enabled() || !x.requires_grad()) {  // no backward will come back through here
    act(*gate, unit, enter, /*backward=*/false);
    return x;
  }
  auto cap = c10::make_intrusive<GateCapsule>(gate, unit);
  return enter ? GateFunction<true>::apply(x, cap) : GateFunction<false>::apply(x, cap);
}

}  // namespace

void WeightGate::open(std::shared_ptr<WeightGate> gate) {
  const std::lock_guard<std::mutex> lock(gate_mutex);
  open_gate = std::move(gate);
}

void WeightGate::close(const WeightGate* gate) {
  const std::lock_guard<std::mutex> lock(gate_mutex);
  if (open_gate.get() == gate) open_gate.reset();
}

parallel::ShardedTensor gated(const std::string& unit, const Segment& block, const parallel::ShardedTensor& x) {
  const std::shared_ptr<WeightGate> gate = current();
  if (!gate) return block(x);
  parallel::ShardedTensor y = block(x.with(pass(true, gate, unit, x.local)));
  return y.with(pass(false, gate, unit, y.local));
}

}  // namespace halo::model
