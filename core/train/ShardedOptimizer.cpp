// Moments and steps run on whole chunks (one kernel per bucket, padding included: its
// gradient is zero, so it stays zero); decay and LAMB's trust ratio act per parameter piece.
#include "train/ShardedOptimizer.h"

#include <cmath>

#include <fmt/format.h>
#include <torch/torch.h>

#include "util/Error.h"

namespace halo::train {

ShardedOptimizer::ShardedOptimizer(std::shared_ptr<parallel::ShardedState> state, OptimizerOptions opts,
                                   std::shared_ptr<parallel::Mesh> mesh)
    : state_(std::move(state)), opts_(opts), mesh_(std::move(mesh)) {
  for (size_t b = 0; b < state_->buckets().size(); ++b) {
    slots_.emplace_back();
    for (const std::string& s : slot_names(opts_.kind)) slots_.back()[s] = at::zeros_like(state_->owned_parameters(b));
  }
}

void ShardedOptimizer::step(double lr, const std::vector<at::Tensor>& grads) {
  torch::NoGradGuard no_grad;
  ++steps_;
  const BiasCorrection bc = bias_correction(opts_, steps_);
  const auto& buckets = state_->buckets();
  auto decayed = [&](const parallel::ShardedState::Piece& piece) {
    return state_->params()[piece.param].second.dim() >= 2 && opts_.weight_decay > 0;
  };
  std::vector<at::Tensor> updates;  // LAMB's, per bucket
  for (size_t b = 0; b < buckets.size(); ++b) {
    at::Tensor p = state_->owned_parameters(b);
    const at::Tensor& g = grads.at(b);
    auto& slot = slots_[b];
    if (opts_.kind == config::OptimizerKind::Sgd) {
      at::Tensor d = g.clone();  // g + decay * p, in place piece by piece
      for (const auto& piece : buckets[b].pieces)
        if (decayed(piece))
          d.narrow(0, piece.at, piece.length).add_(p.narrow(0, piece.at, piece.length), opts_.weight_decay);
      sgd_step(p, slot["momentum_buffer"], d, lr, opts_);
      continue;
    }
    const at::Tensor& m = slot["exp_avg"];
    const at::Tensor& v = slot["exp_avg_sq"];
    adam_moments(m, v, g, opts_);
    if (opts_.kind == config::OptimizerKind::AdamW) {
      for (const auto& piece : buckets[b].pieces)
        if (decayed(piece)) p.narrow(0, piece.at, piece.length).mul_(1.0 - lr * opts_.weight_decay);
      adamw_step(p, m, v, lr, bc, opts_);
    } else {  // lamb: the update first, the trust ratios over the world, then the step
      at::Tensor update = lamb_update(m, v, bc, opts_);
      for (const auto& piece : buckets[b].pieces)
        if (decayed(piece))
          update.narrow(0, piece.at, piece.length).add_(p.narrow(0, piece.at, piece.length), opts_.weight_decay);
      updates.push_back(std::move(update));
    }
  }
  if (opts_.kind != config::OptimizerKind::Lamb) return;
  const std::vector<double> trust = trust_ratios(updates);
  for (size_t b = 0; b < buckets.size(); ++b) {
    at::Tensor p = state_->owned_parameters(b);
    for (const auto& piece : buckets[b].pieces)
      p.narrow(0, piece.at, piece.length).add_(updates[b].narrow(0, piece.at, piece.length), -lr * trust[piece.param]);
  }
}

std::vector<double> ShardedOptimizer::trust_ratios(const std::vector<at::Tensor>& updates) const {
  const size_t n = state_->params().size();
  at::Tensor sums = at::zeros({2, static_cast<int64_t>(n)}, at::kDouble);  // ||p||^2, ||update||^2 per parameter
  const auto& buckets = state_->buckets();
  for (size_t b = 0; b < buckets.size(); ++b) {
    const at::Tensor p = state_->owned_parameters(b);
    for (const auto& piece : buckets[b].pieces) {
      const auto i = static_cast<int64_t>(piece.param);
      sums[0][i] += p.narrow(0, piece.at, piece.length).to(at::kDouble).square().sum();
      sums[1][i] += updates[b].narrow(0, piece.at, piece.length).to(at::kDouble).square().sum();
    }
  }
  at::Tensor on_device = sums.to(state_->buckets().empty() ? at::kCPU : state_->buckets()[0].flat.device());
  mesh_->world().all_reduce_sum(on_device);
  sums = on_device.cpu();
  std::vector<double> trust(n, 1.0);
  for (size_t i = 0; i < n; ++i) {
    const double pn = std::sqrt(sums[0][static_cast<int64_t>(i)].item<double>());
    const double un = std::sqrt(sums[1][static_cast<int64_t>(i)].item<double>());
    trust[i] = pn > 0 && un > 0 ? pn / un : 1.0;
  }
  return trust;
}

std::vector<std::pair<std::string, at::Tensor>> ShardedOptimizer::state() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const std::string& s : slot_names(opts_.kind)) {
    std::vector<at::Tensor> chunks;
    for (const auto& slot : slots_) chunks.push_back(slot.at(s));
    const std::vector<at::Tensor> whole = state_->gather_whole(chunks);
    for (size_t i = 0; i < whole.size(); ++i)
      if (whole[i].defined()) out.emplace_back(state_->params()[i].first + "." + s, whole[i]);
  }
  out.emplace_back("__step__", torch::tensor(steps_, torch::kInt64));
  return out;
}

void ShardedOptimizer::load_state(const std::map<std::string, at::Tensor>& state) {
  torch::NoGradGuard no_grad;
  const auto& params = state_->params();
  for (const std::string& s : slot_names(opts_.kind)) {
    std::vector<at::Tensor> whole(params.size());
    for (const auto& bucket : state_->buckets())
      for (size_t i : bucket.params) {
        const std::string key = params[i].first + "." + s;
        auto it = state.find(key);
        if (it == state.end() || it->second.sizes() != params[i].second.sizes())
          throw util::Error(fmt::format("optimizer state '{}' is missing or has the wrong shape", key),
                            "resume with the same model and optimizer the checkpoint was written with");
        whole[i] = it->second.to(params[i].second.device());
      }
    const std::vector<at::Tensor> chunks = state_->chunks_of(whole);
    for (size_t b = 0; b < slots_.size(); ++b) slots_[b].at(s).copy_(chunks[b]);
  }
  auto it = state.find("__step__");
  if (it == state.end()) throw util::Error("optimizer state has no step counter");
  steps_ = it->second.item<int64_t>();
}

}  // namespace halo::train
