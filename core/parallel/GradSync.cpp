// One world all-reduce per bucket equals "sum over sp, mean over dp": Partial gradients are
// pre-scaled by 1/dp, Replicate ones (identical on the sp ranks) by 1/(dp*sp).
#include "parallel/GradSync.h"

#include <ATen/ATen.h>

#include "shard/StateBuckets.h"

namespace halo::parallel {

std::vector<std::vector<size_t>> gradient_buckets(const NamedParams& params, size_t bucket_bytes,
                                                  const std::vector<int>& unit) {
  std::vector<int64_t> bytes;
  std::vector<int> group;  // the dtype, and the unit when there are units
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& p = params[i].second;
    bytes.push_back(p.requires_grad() ? p.numel() * static_cast<int64_t>(p.element_size()) : -1);
    group.push_back(static_cast<int>(p.scalar_type()) * (1 << 20) + (unit.empty() ? 0 : unit.at(i) + 1));
  }
  return shard::state_buckets(bytes, group, static_cast<int64_t>(bucket_bytes));
}

double gradient_scale(GradPlacement placement, const MeshShape& shape) {
  return placement == GradPlacement::Partial ? 1.0 / shape.dp : 1.0 / (shape.dp * shape.sp);
}

GradSync::GradSync(Params params, std::function<GradPlacement(const std::string&)> placement,
                   std::shared_ptr<Mesh> mesh, size_t bucket_bytes)
    : params_(std::move(params)), mesh_(std::move(mesh)) {
  for (const auto& bucket : gradient_buckets(params_, bucket_bytes)) {
    buckets_.emplace_back();
    for (size_t i : bucket)
      buckets_.back().push_back({params_[i].second, gradient_scale(placement(params_[i].first), mesh_->shape())});
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
  // One bucket at a time: a flat copy of its scaled gradients, summed in place, copied back.
  for (const auto& bucket : buckets_) {
    int64_t n = 0;
    for (const auto& e : bucket) n += e.param.numel();
    at::Tensor flat = at::empty({n}, bucket.front().param.options().requires_grad(false));
    int64_t at = 0;
    for (const auto& e : bucket) {
      at::Tensor part = flat.narrow(0, at, e.param.numel());
      if (e.param.grad().defined())
        part.copy_(e.param.grad().reshape(-1)).mul_(e.scale);
      else
        part.zero_();
      at += e.param.numel();
    }
    mesh_->world().all_reduce_sum_async(flat).wait();
    at = 0;
    for (const auto& e : bucket) {
      at::Tensor v = flat.narrow(0, at, e.param.numel()).view_as(e.param);
      if (e.param.grad().defined())
        e.param.mutable_grad().copy_(v);
      else
        e.param.mutable_grad() = v.clone();
      at += e.param.numel();
    }
  }
}

}  // namespace halo::parallel
