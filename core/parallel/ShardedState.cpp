// Chunk r of every bucket belongs to world rank r. Gradients are pre-scaled as GradSync's are,
// so one reduce-scatter gives "sum over sp, mean over dp" for each owned element.
#include "parallel/ShardedState.h"

#include <algorithm>
#include <map>
#include <utility>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "shard/StateBuckets.h"
#include "util/Error.h"

namespace halo::parallel {

namespace {

at::Tensor flat_view(const at::Tensor& flat, int64_t offset, const at::Tensor& like) {
  return flat.narrow(0, offset, like.numel()).view(like.sizes());
}

}  // namespace

// Per step while armed: gradients still to come per bucket, the buckets done, the next to go.
struct ShardedState::Overlap {
  ShardedState* owner = nullptr;  // cleared when the state goes (the hooks stay on the parameters)
  bool armed = false;
  std::vector<size_t> bucket_of;  // per parameter (buckets().size(): none)
  std::vector<int64_t> remaining;
  std::vector<bool> done, made;  // per bucket; per parameter
  std::vector<at::Tensor> chunks;
  int64_t next = -1;  // the bucket to reduce-scatter next (the last first)
};

// Called by AccumulateGrad once a parameter's .grad holds this backward's gradient.
struct OverlapHook : torch::autograd::PostAccumulateGradHook {
  OverlapHook(std::shared_ptr<ShardedState::Overlap> o, size_t param) : overlap(std::move(o)), param(param) {}
  void operator()(const torch::autograd::Variable& /*tensor*/) override {
    if (overlap->armed && overlap->owner) overlap->owner->gradient_made(param);
  }
  std::shared_ptr<ShardedState::Overlap> overlap;
  size_t param;
};

ShardedState::ShardedState(NamedParams params, const std::function<GradPlacement(const std::string&)>& placement,
                           std::shared_ptr<Mesh> mesh, size_t bucket_bytes, const std::vector<std::string>& unit_of)
    : params_(std::move(params)), mesh_(std::move(mesh)) {
  const int64_t world = mesh_->world().size(), rank = mesh_->world().rank();
  const std::vector<int> unit = index_units(unit_of);
  unit_buckets_.resize(units_.size());
  gathered_.assign(units_.size(), 0);
  prefetched_.resize(units_.size());
  for (const auto& indices : gradient_buckets(params_, bucket_bytes, unit)) {
    Bucket b;
    if (!unit.empty()) b.unit = unit[indices.front()];
    int64_t n = 0;
    for (size_t i : indices) {
      b.params.push_back(i);
      b.offset.push_back(n);
      b.scale.push_back(gradient_scale(placement(params_[i].first), mesh_->shape()));
      n += params_[i].second.numel();
    }
    b.chunk = shard::chunk_elements(n, static_cast<int>(world));
    const at::Tensor& first = params_[indices.front()].second;
    b.flat = at::zeros({b.chunk * world}, first.options().requires_grad(false));
    at::NoGradGuard no_grad;
    for (size_t k = 0; k < b.params.size(); ++k) {
      at::Tensor& p = params_[b.params[k]].second;
      at::Tensor view = flat_view(b.flat, b.offset[k], p);
      view.copy_(p);
      p.set_data(view);
      // This rank's chunk [rank * chunk, (rank + 1) * chunk) meets [offset, offset + numel).
      const int64_t lo = std::max(b.offset[k], rank * b.chunk);
      const int64_t hi = std::min(b.offset[k] + p.numel(), (rank + 1) * b.chunk);
      if (lo < hi) b.pieces.push_back({b.params[k], lo - b.offset[k], hi - lo, lo - rank * b.chunk});
    }
    if (b.unit >= 0) {  // the whole values go until the unit is gathered
      b.owned = b.flat.narrow(0, rank * b.chunk, b.chunk).clone();
      drop(b);
      unit_buckets_[static_cast<size_t>(b.unit)].push_back(buckets_.size());
    }
    buckets_.push_back(std::move(b));
  }
  overlap_ = std::make_shared<Overlap>();
  overlap_->owner = this;
  overlap_->bucket_of.assign(params_.size(), buckets_.size());
  for (size_t b = 0; b < buckets_.size(); ++b)
    for (size_t i : buckets_[b].params) {
      overlap_->bucket_of[i] = b;
      torch::autograd::impl::set_post_acc_grad_hooks(params_[i].second, std::make_unique<OverlapHook>(overlap_, i));
    }
}

std::vector<int> ShardedState::index_units(const std::vector<std::string>& unit_of) {
  if (unit_of.empty()) return {};
  if (unit_of.size() != params_.size())
    throw util::Error(fmt::format("ZeRO's weights stage: {} units for {} parameters", unit_of.size(), params_.size()));
  std::map<std::string, int> index;
  std::vector<int> unit;
  for (const std::string& u : unit_of) {
    if (u.empty()) {
      unit.push_back(-1);
      continue;
    }
    auto [it, fresh] = index.emplace(u, static_cast<int>(units_.size()));
    if (fresh) units_.push_back(u);
    unit.push_back(it->second);
  }
  return unit;
}

ShardedState::~ShardedState() {
  overlap_->owner = nullptr;
  overlap_->armed = false;
}

at::Tensor ShardedState::owned_parameters(size_t bucket) const {
  const Bucket& b = buckets_.at(bucket);
  if (b.unit >= 0) return b.owned;
  return b.flat.narrow(0, mesh_->world().rank() * b.chunk, b.chunk);
}

Pending ShardedState::materialize(Bucket& b) {
  c10::StorageImpl* s = b.flat.storage().unsafeGetStorageImpl();
  const size_t nbytes = static_cast<size_t>(b.flat.numel()) * b.flat.element_size();
  s->set_data_ptr_noswap(s->allocator()->allocate(nbytes));
  s->set_nbytes(nbytes);
  at::NoGradGuard no_grad;
  b.flat.narrow(0, mesh_->world().rank() * b.chunk, b.chunk).copy_(b.owned);
  return mesh_->world().all_gather_in_place_async(b.flat);
}

void ShardedState::drop(Bucket& b) {
  c10::StorageImpl* s = b.flat.storage().unsafeGetStorageImpl();
  s->set_data_ptr_noswap(at::DataPtr(nullptr, s->device()));
  s->set_nbytes(0);
}

std::optional<size_t> ShardedState::find_unit(const std::string& unit) const {
  const auto it = std::find(units_.begin(), units_.end(), unit);
  if (it == units_.end()) return std::nullopt;
  return static_cast<size_t>(it - units_.begin());
}

std::optional<std::string> ShardedState::neighbour(const std::string& unit, int step) const {
  const auto u = find_unit(unit);
  if (!u) return std::nullopt;
  const auto n = static_cast<int64_t>(*u) + step;
  if (n < 0 || n >= static_cast<int64_t>(units_.size())) return std::nullopt;
  return units_[static_cast<size_t>(n)];
}

void ShardedState::wait_prefetch(size_t u) {
  for (Pending& p : std::exchange(prefetched_[u], {})) p.wait();
}

void ShardedState::gather(const std::string& unit) {
  const auto u = find_unit(unit);
  if (!u) return;
  if (!prefetched_[*u].empty()) return wait_prefetch(*u);  // the prefetch's count is this gather's
  if (gathered_[*u]++ == 0)
    for (size_t b : unit_buckets_[*u]) materialize(buckets_[b]).wait();
}

void ShardedState::prefetch(const std::string& unit) {
  const auto u = find_unit(unit);
  if (!u || gathered_[*u] > 0) return;
  gathered_[*u] = 1;
  for (size_t b : unit_buckets_[*u]) prefetched_[*u].push_back(materialize(buckets_[b]));
}

void ShardedState::release(const std::string& unit) {
  const auto u = find_unit(unit);
  if (!u || gathered_[*u] == 0 || --gathered_[*u] > 0) return;
  wait_prefetch(*u);
  for (size_t b : unit_buckets_[*u]) drop(buckets_[b]);
}

void ShardedState::release_all() {
  for (size_t u = 0; u < units_.size(); ++u) {
    wait_prefetch(u);
    if (std::exchange(gathered_[u], 0) > 0)
      for (size_t b : unit_buckets_[u]) drop(buckets_[b]);
  }
}

ShardedState::Whole::Whole(ShardedState& s) : s_(s) {
  for (const std::string& u : s_.units_) s_.gather(u);
}

ShardedState::Whole::~Whole() {
  const int64_t rank = s_.mesh_->world().rank();
  at::NoGradGuard no_grad;
  for (Bucket& b : s_.buckets_)
    if (b.unit >= 0) b.owned.copy_(b.flat.narrow(0, rank * b.chunk, b.chunk));
  for (const std::string& u : s_.units_) s_.release(u);
}

at::Tensor ShardedState::reduce_scatter_bucket(size_t bucket, bool free_gradients) {
  const Bucket& b = buckets_.at(bucket);
  at::NoGradGuard no_grad;
  at::Tensor flat = at::zeros_like(b.flat);  // one bucket's gradients at a time
  for (size_t k = 0; k < b.params.size(); ++k) {
    at::Tensor& g = params_[b.params[k]].second.mutable_grad();
    if (g.defined()) flat.narrow(0, b.offset[k], g.numel()).copy_(g.reshape(-1)).mul_(b.scale[k]);
    if (free_gradients) g = at::Tensor();  // packed: the whole gradient goes before the collective
  }
  at::Tensor chunk = at::empty({b.chunk}, flat.options());
  mesh_->world().reduce_scatter_sum_async(flat, chunk).wait();
  return chunk;
}

std::vector<at::Tensor> ShardedState::reduce_scatter_gradients(bool free_gradients) {
  std::vector<at::Tensor> out;
  for (size_t b = 0; b < buckets_.size(); ++b) out.push_back(reduce_scatter_bucket(b, free_gradients));
  return out;
}

void ShardedState::arm_overlap() {
  Overlap& o = *overlap_;
  o.remaining.clear();
  for (const Bucket& b : buckets_) o.remaining.push_back(static_cast<int64_t>(b.params.size()));
  o.done.assign(buckets_.size(), false);
  o.made.assign(params_.size(), false);
  o.chunks.assign(buckets_.size(), at::Tensor());
  o.next = static_cast<int64_t>(buckets_.size()) - 1;
  o.armed = true;
}

void ShardedState::gradient_made(size_t param) {
  Overlap& o = *overlap_;
  const size_t b = o.bucket_of.at(param);
  if (o.made.at(param))  // its bucket may have gone with the first: the sum would be wrong
    throw util::Error(
        fmt::format("parallel.shard_state gradients: parameter '{}' got a second gradient in one backward "
                    "(its bucket is reduce-scattered once every parameter of it has one)",
                    params_[param].first),
        "run backward once per micro-step, or use parallel.shard_state optimizer");
  o.made[param] = true;
  if (b >= buckets_.size() || --o.remaining[b] > 0) return;
  o.done[b] = true;
  while (o.next >= 0 && o.done[static_cast<size_t>(o.next)]) {
    o.chunks[static_cast<size_t>(o.next)] = reduce_scatter_bucket(static_cast<size_t>(o.next), true);
    --o.next;
  }
}

std::vector<at::Tensor> ShardedState::finish_overlap() {
  Overlap& o = *overlap_;
  o.armed = false;
  for (; o.next >= 0; --o.next)  // buckets with a parameter that got no gradient, in the same order
    o.chunks[static_cast<size_t>(o.next)] = reduce_scatter_bucket(static_cast<size_t>(o.next), true);
  return std::exchange(o.chunks, {});
}

std::vector<at::Tensor> ShardedState::owned_gradients() const {
  std::vector<at::Tensor> grads;
  for (const auto& [name, p] : params_) grads.push_back(p.grad());
  return chunks_of(grads);
}

void ShardedState::all_gather_parameters() {
  at::NoGradGuard no_grad;
  for (Bucket& b : buckets_)
    if (b.unit < 0) mesh_->world().all_gather_in_place(b.flat);  // this rank's chunk is in it
}

std::vector<at::Tensor> ShardedState::gather_whole(const std::vector<at::Tensor>& chunks) const {
  std::vector<at::Tensor> whole(params_.size());
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const Bucket& b = buckets_[i];
    at::Tensor flat = at::empty_like(b.flat);
    flat.narrow(0, mesh_->world().rank() * b.chunk, b.chunk).copy_(chunks.at(i));
    mesh_->world().all_gather_in_place(flat);
    for (size_t k = 0; k < b.params.size(); ++k) {
      const at::Tensor& p = params_[b.params[k]].second;
      whole[b.params[k]] = flat_view(flat, b.offset[k], p).clone();
    }
  }
  return whole;
}

std::vector<at::Tensor> ShardedState::chunks_of(const std::vector<at::Tensor>& whole) const {
  std::vector<at::Tensor> out;
  for (const Bucket& b : buckets_) {
    at::Tensor chunk = at::zeros({b.chunk}, b.flat.options());
    for (const Piece& piece : b.pieces)
      if (const at::Tensor& w = whole.at(piece.param); w.defined())
        chunk.narrow(0, piece.at, piece.length).copy_(w.reshape(-1).narrow(0, piece.begin, piece.length));
    out.push_back(std::move(chunk));
  }
  return out;
}

}  // namespace halo::parallel
