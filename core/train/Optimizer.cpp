// The update rules follow torch.optim.AdamW / SGD(momentum) and LAMB (You et al. 2019,
// trust ratio ||p|| / ||update|| with bias-corrected Adam moments), computed in float32+.
#include "train/Optimizer.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "util/Error.h"

namespace halo::train {

Optimizer::Optimizer(Params params, OptimizerOptions opts) : params_(std::move(params)), opts_(std::move(opts)) {
  for (const auto& [name, p] : params_) {
    if (opts_.kind == config::OptimizerKind::Sgd) {
      slot_[name + ".momentum_buffer"] = torch::zeros_like(p);
    } else {
      slot_[name + ".exp_avg"] = torch::zeros_like(p);
      slot_[name + ".exp_avg_sq"] = torch::zeros_like(p);
    }
  }
}

void Optimizer::zero_grad() {
  for (auto& [name, p] : params_)
    if (p.grad().defined()) p.mutable_grad().zero_();
}

void Optimizer::step(double lr) {
  torch::NoGradGuard no_grad;
  ++steps_;
  const double b1 = opts_.beta1, b2 = opts_.beta2;
  const double bc1 = 1.0 - std::pow(b1, static_cast<double>(steps_));
  const double bc2 = 1.0 - std::pow(b2, static_cast<double>(steps_));
  for (auto& [name, p] : params_) {
    if (!p.grad().defined()) continue;
    const at::Tensor g = p.grad();
    const double wd = p.dim() >= 2 ? opts_.weight_decay : 0.0;
    if (opts_.kind == config::OptimizerKind::Sgd) {
      at::Tensor& buf = slot_[name + ".momentum_buffer"];
      at::Tensor d = wd > 0 ? g + wd * p : g;
      buf.mul_(opts_.momentum).add_(d);
      p.add_(buf, -lr);
      continue;
    }
    at::Tensor& m = slot_[name + ".exp_avg"];
    at::Tensor& v = slot_[name + ".exp_avg_sq"];
    m.lerp_(g, 1.0 - b1);
    v.mul_(b2).addcmul_(g, g, 1.0 - b2);
    if (opts_.kind == config::OptimizerKind::AdamW) {
      // torch.optim.AdamW's order (foreach=False): one temporary, the bias corrections folded
      // into the scalars: p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps).
      if (wd > 0) p.mul_(1.0 - lr * wd);
      at::Tensor denom = v.sqrt().div_(std::sqrt(bc2)).add_(opts_.eps);
      p.addcdiv_(m, denom, -lr / bc1);
    } else {  // lamb
      at::Tensor update = (m / bc1) / ((v / bc2).sqrt() + opts_.eps);
      if (wd > 0) update.add_(p, wd);
      const double pn = p.norm().item<double>(), un = update.norm().item<double>();
      const double trust = pn > 0 && un > 0 ? pn / un : 1.0;
      p.add_(update, -lr * trust);
    }
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
