// One world all-reduce per bucket equals "sum over sp, mean over dp": Partial gradients are
// pre-scaled by 1/dp, Replicate ones (identical on the sp ranks) by 1/(dp*sp).
#include "parallel/GradSync.h"

#include <ATen/ATen.h>

namespace halo::parallel {

GradSync::GradSync(Params params, std::function<GradPlacement(const std::string&)> placement,
                   std::shared_ptr<Mesh> mesh, size_t bucket_bytes)
    : params_(std::move(params)), mesh_(std::move(mesh)) {
  const double dp = mesh_->shape().dp, sp = mesh_->shape().sp;
  size_t filled = bucket_bytes;
  for (const auto& [name, p] : params_) {
    if (!p.requires_grad()) continue;
    const size_t bytes = static_cast<size_t>(p.numel()) * p.element_size();
    if (filled + bytes > bucket_bytes || buckets_.empty() ||
        buckets_.back().front().param.scalar_type() != p.scalar_type()) {
      buckets_.emplace_back();
      filled = 0;
    }
    const double scale = placement(name) == GradPlacement::Partial ? 1.0 / dp : 1.0 / (dp * sp);
    buckets_.back().push_back({p, scale});
    filled += bytes;
  }
}

size_t GradSync::bytes_per_step() const {
  size_t total = 0;
  for (const auto& b : buckets_)
    for (const auto& e : b) total += static_cast<size_t>(e.param.numel()) * e.param.element_size();
  return total;
}

void GradSync::sync() {
  if (mesh_->world().size() == 1) return;
  std::vector<at::Tensor> flats;
  std::vector<Pending> pending;
  flats.reserve(buckets_.size());
  for (const auto& bucket : buckets_) {
    std::vector<at::Tensor> parts;
    for (const auto& e : bucket) {
      at::Tensor g = e.param.grad();
      if (!g.defined()) g = at::zeros_like(e.param);
      parts.push_back((g * e.scale).reshape(-1));
    }
    flats.push_back(at::cat(parts));
    pending.push_back(mesh_->world().all_reduce_sum_async(flats.back()));
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    pending[b].wait();
    int64_t at = 0;
    for (const auto& e : buckets_[b]) {
      const int64_t n = e.param.numel();
      at::Tensor v = flats[b].narrow(0, at, n).view_as(e.param);
      if (e.param.grad().defined())
        e.param.mutable_grad().copy_(v);
      else
        e.param.mutable_grad() = v.clone();
      at += n;
    }
  }
}

}  // namespace halo::parallel
