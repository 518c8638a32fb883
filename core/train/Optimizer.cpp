// The update rules follow torch.optim.AdamW / SGD(momentum) and LAMB (You et al. 2019,
// trust ratio ||p|| / ||update|| with bias-corrected Adam moments), computed in float32+.
#include "train/Optimizer.h"

#include <cmath>

#include <fmt/format.h>
#include <torch/torch.h>

#include "util/Error.h"

namespace halo::train {

BiasCorrection bias_correction(const OptimizerOptions& o, int64_t steps) {
  return {1.0 - std::pow(o.beta1, static_cast<double>(steps)), 1.0 - std::pow(o.beta2, static_cast<double>(steps))};
}

std::vector<std::string> slot_names(config::OptimizerKind kind) {
  if (kind == config::OptimizerKind::Sgd) return {"momentum_buffer"};
  return {"exp_avg", "exp_avg_sq"};
}

void adam_moments(const at::Tensor& m, const at::Tensor& v, const at::Tensor& g, const OptimizerOptions& o) {
  m.lerp_(g, 1.0 - o.beta1);
  v.mul_(o.beta2).addcmul_(g, g, 1.0 - o.beta2);
}

void adamw_step(const at::Tensor& p, const at::Tensor& m, const at::Tensor& v, double lr, BiasCorrection bc,
                const OptimizerOptions& o) {
  const at::Tensor denom = v.sqrt().div_(std::sqrt(bc.bc2)).add_(o.eps);
  p.addcdiv_(m, denom, -lr / bc.bc1);
}

at::Tensor lamb_update(const at::Tensor& m, const at::Tensor& v, BiasCorrection bc, const OptimizerOptions& o) {
  return (m / bc.bc1) / ((v / bc.bc2).sqrt() + o.eps);
}

void sgd_step(const at::Tensor& p, const at::Tensor& buf, const at::Tensor& d, double lr, const OptimizerOptions& o) {
  buf.mul_(o.momentum).add_(d);
  p.add_(buf, -lr);
}

Optimizer::Optimizer(Params params, OptimizerOptions opts) : params_(std::move(params)), opts_(std::move(opts)) {
  for (const auto& [name, p] : params_)
    for (const std::string& s : slot_names(opts_.kind)) slot_[name + "." + s] = torch::zeros_like(p);
}

void Optimizer::zero_grad() {
  for (auto& [name, p] : params_) p.mutable_grad().reset();  // backward makes them again
}

void Optimizer::step(double lr) {
  torch::NoGradGuard no_grad;
  ++steps_;
  if (opts_.kind == config::OptimizerKind::AdamW) return fused_adamw_step(lr);
  const BiasCorrection bc = bias_correction(opts_, steps_);
  for (auto& [name, p] : params_) {
    if (!p.grad().defined()) continue;
    const at::Tensor g = p.grad();
    const double wd = p.dim() >= 2 ? opts_.weight_decay : 0.0;
    if (opts_.kind == config::OptimizerKind::Sgd) {
      sgd_step(p, slot_[name + ".momentum_buffer"], wd > 0 ? g + wd * p : g, lr, opts_);
      continue;
    }
    const at::Tensor& m = slot_[name + ".exp_avg"];
    const at::Tensor& v = slot_[name + ".exp_avg_sq"];
    adam_moments(m, v, g, opts_);
    if (opts_.kind == config::OptimizerKind::AdamW) {
      if (wd > 0) p.mul_(1.0 - lr * wd);
      adamw_step(p, m, v, lr, bc, opts_);
    } else {  // lamb
      at::Tensor update = lamb_update(m, v, bc, opts_);
      if (wd > 0) update.add_(p, wd);
      const double pn = p.norm().item<double>(), un = update.norm().item<double>();
      const double trust = pn > 0 && un > 0 ? pn / un : 1.0;
      p.add_(update, -lr * trust);
    }
  }
}

// LibTorch's fused AdamW (torch.optim.AdamW(fused=True)): one pass over each parameter, no
// temporaries, the same rule as adamw_step; one call for the decayed parameters, one for the rest.
void Optimizer::fused_adamw_step(double lr) {
  struct Group {
    std::vector<at::Tensor> p, g, m, v, steps;
  } groups[2];  // decayed (2-D and up), not decayed
  for (auto& [name, p] : params_) {
    if (!p.grad().defined()) continue;
    Group& gr = groups[p.dim() >= 2 ? 0 : 1];
    gr.p.push_back(p);
    gr.g.push_back(p.grad());
    gr.m.push_back(slot_.at(name + ".exp_avg"));
    gr.v.push_back(slot_.at(name + ".exp_avg_sq"));
  }
  for (int k = 0; k < 2; ++k) {
    Group& gr = groups[k];
    if (gr.p.empty()) continue;
    // The kernel reads the step count from a tensor per parameter, on the parameters' device.
    const at::Tensor step = at::full({}, static_cast<double>(steps_), gr.p.front().options().dtype(at::kFloat));
    gr.steps.assign(gr.p.size(), step);
    at::_fused_adamw_(gr.p, gr.g, gr.m, gr.v, {}, gr.steps, lr, opts_.beta1, opts_.beta2,
                      k == 0 ? opts_.weight_decay : 0.0, opts_.eps, /*amsgrad=*/false, /*maximize=*/false);
  }
}

std::vector<std::pair<std::string, at::Tensor>> Optimizer::state() const {
  std::vector<std::pair<std::string, at::Tensor>> out(slot_.begin(), slot_.end());
  out.emplace_back("__step__", torch::tensor(steps_, torch::kInt64));
  return out;
}

void Optimizer::load_state(const std::map<std::string, at::Tensor>& state) {
  torch::NoGradGuard no_grad;
  for (auto& [key, t] : slot_) {
    auto it = state.find(key);
    if (it == state.end() || it->second.sizes() != t.sizes())
      throw util::Error(fmt::format("optimizer state '{}' is missing or has the wrong shape", key),
                        "resume with the same model and optimizer the checkpoint was written with");
    t.copy_(it->second);
  }
  auto it = state.find("__step__");
  if (it == state.end()) throw util::Error("optimizer state has no step counter");
  steps_ = it->second.item<int64_t>();
}

}  // namespace halo::train
