// One world all-reduce per bucket equals "sum over sp, mean over dp": Partial gradients are
// pre-scaled by 1/dp, Replicate ones (identical on the sp ranks) by 1/(dp*sp).
#include "parallel/GradSync.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "shard/StateBuckets.h"
#include "util/Error.h"

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

// Per armed backward: gradients still to come per bucket, which buckets are complete, the
// next to start (the last first, so that every rank starts them in the same order), and the
// all-reduces in flight.
struct GradSync::Overlap {
  GradSync* owner = nullptr;  // cleared when the sync goes (the hooks stay on the parameters)
  bool armed = false;
  std::vector<int64_t> remaining;
  std::vector<std::vector<bool>> made;  // per bucket, per entry
  int64_t next = -1;
  std::vector<Pending> pending;
};

// Called by AccumulateGrad once a parameter's .grad holds this backward's gradient.
struct GradSync::Hook : torch::autograd::PostAccumulateGradHook {
  Hook(std::shared_ptr<Overlap> o, size_t bucket, size_t entry) : overlap(std::move(o)), bucket(bucket), entry(entry) {}
  void operator()(const torch::autograd::Variable& /*tensor*/) override {
    if (overlap->armed && overlap->owner) overlap->owner->gradient_made(bucket, entry);
  }
  std::shared_ptr<Overlap> overlap;
  size_t bucket, entry;
};

namespace {

std::vector<std::vector<size_t>> layer_gradient_buckets(const NamedParams& params, size_t bucket_bytes,
                                                        const std::vector<int>& layer) {
  std::vector<int64_t> bytes;
  std::vector<int> dtype;
  for (const auto& [name, p] : params) {
    bytes.push_back(p.requires_grad() ? p.numel() * static_cast<int64_t>(p.element_size()) : -1);
    dtype.push_back(static_cast<int>(p.scalar_type()));
  }
  return shard::layer_buckets(bytes, layer, dtype, static_cast<int64_t>(bucket_bytes));
}

}  // namespace

GradSync::GradSync(Params params, std::function<GradPlacement(const std::string&)> placement,
                   std::shared_ptr<Mesh> mesh, size_t bucket_bytes, bool overlap, const std::vector<int>& layer)
    : params_(std::move(params)), mesh_(std::move(mesh)) {
  if (!layer.empty() && layer.size() != params_.size())
    throw util::Error(fmt::format("gradient sync: {} layer indices for {} parameters", layer.size(), params_.size()));
  const auto buckets =
      layer.empty() ? gradient_buckets(params_, bucket_bytes) : layer_gradient_buckets(params_, bucket_bytes, layer);
  for (const auto& bucket : buckets) {
    buckets_.emplace_back();
    for (size_t i : bucket)
      buckets_.back().push_back({params_[i].second, gradient_scale(placement(params_[i].first), mesh_->shape())});
  }
  if (!overlap || mesh_->world().size() == 1) return;
  overlap_ = std::make_shared<Overlap>();
  overlap_->owner = this;
  for (size_t b = 0; b < buckets_.size(); ++b)
    for (size_t e = 0; e < buckets_[b].size(); ++e)
      torch::autograd::impl::set_post_acc_grad_hooks(buckets_[b][e].param, std::make_unique<Hook>(overlap_, b, e));
}

GradSync::~GradSync() {
  if (!overlap_) return;
  overlap_->owner = nullptr;
  overlap_->armed = false;
}

size_t GradSync::bytes_per_step() const {
  size_t total = 0;
  for (const auto& b : buckets_)
    for (const auto& e : b) total += static_cast<size_t>(e.param.numel()) * e.param.element_size();
  return total;
}

void GradSync::sync() {
  if (mesh_->world().size() == 1) return;
  std::vector<Pending> pending;
  for (size_t b = buckets_.size(); b-- > 0;) pending.push_back(launch(b));  // the order backward completes them
  for (Pending& p : pending) p.wait();
}

void GradSync::arm() {
  if (!overlap_) return;
  Overlap& o = *overlap_;
  o.remaining.clear();
  o.made.clear();
  for (const auto& b : buckets_) {
    o.remaining.push_back(static_cast<int64_t>(b.size()));
    o.made.emplace_back(b.size(), false);
  }
  o.next = static_cast<int64_t>(buckets_.size()) - 1;
  o.pending.clear();
  o.armed = true;
}

void GradSync::gradient_made(size_t bucket, size_t entry) {
  Overlap& o = *overlap_;
  if (o.made[bucket][entry])  // its bucket may have gone with the first: the sum would miss this one
    throw util::Error(fmt::format("gradient sync: a parameter of bucket {} got a second gradient in one backward "
                                  "(its bucket's all-reduce starts once every parameter of it has one)",
                                  bucket),
                      "run backward once per micro-step");
  o.made[bucket][entry] = true;
  --o.remaining[bucket];
  while (o.next >= 0 && o.remaining[static_cast<size_t>(o.next)] == 0)
    o.pending.push_back(launch(static_cast<size_t>(o.next--)));
}

Pending GradSync::launch(size_t bucket) {
  const auto& entries = buckets_[bucket];
  int64_t n = 0;
  for (const auto& e : entries) n += e.param.numel();
  at::NoGradGuard no_grad;
  at::Tensor flat = at::empty({n}, entries.front().param.options().requires_grad(false));
  int64_t at = 0;
  for (const auto& e : entries) {
    // The gradient becomes a view of the flat copy (the separate one goes): the all-reduce
    // sums it in place, and nothing reads gradients before finish() has waited.
    // Copied in the parameter's shape: a strided gradient (a Linear's weight gradient is a
    // transpose) needs no contiguous temporary beside the flat copy.
    at::Tensor part = flat.narrow(0, at, e.param.numel()).view(e.param.sizes());
    at::Tensor& g = e.param.mutable_grad();
    if (!g.defined())
      part.zero_();
    else if (e.scale == 1.0)  // a Partial gradient without dp: the copy is all
      part.copy_(g);
    else
      at::mul_out(part, g, e.scale);  // scaled on the way in: one pass, the same products
    g = part;
    at += e.param.numel();
  }
  return mesh_->world().all_reduce_sum_async(flat);
}

void GradSync::finish() {
  if (!overlap_ || !overlap_->armed) return sync();
  Overlap& o = *overlap_;
  o.armed = false;
  for (; o.next >= 0; --o.next) o.pending.push_back(launch(static_cast<size_t>(o.next)));  // not completed in backward
  for (Pending& p : o.pending) p.wait();
  o.pending.clear();
}

}  // namespace halo::parallel
