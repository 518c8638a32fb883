// Gradient synchronisation of replicated weights, bucketed in a fixed order: Partial
// gradients (weights used on sharded data) are summed over sp and averaged over dp;
// Replicate gradients (weights used on replicated data) are only averaged over dp.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "parallel/Mesh.h"

namespace halo::parallel {

enum class GradPlacement { Partial, Replicate };

using NamedParams = std::vector<std::pair<std::string, at::Tensor>>;

// The gradient buckets of GradSync and ShardedState, in a fixed order: the parameters that
// need a gradient, in order, a new bucket at a change of dtype or when `bucket_bytes` is full.
// unit (ZeRO's weights stage; empty: none): per parameter, the streamed unit it belongs to
// (-1: none), a new bucket where it changes. Each bucket lists indices into `params`.
std::vector<std::vector<size_t>> gradient_buckets(const NamedParams& params, size_t bucket_bytes,
                                                  const std::vector<int>& unit = {});

// The factor a gradient is pre-scaled by so that one world sum is "sum over sp, mean over
// dp": 1/dp for Partial gradients, 1/(dp*sp) for Replicate ones (identical on the sp ranks).
double gradient_scale(GradPlacement placement, const MeshShape& shape);

class GradSync {
 public:
  using Params = NamedParams;
  // layer (optional): per parameter, the layer it belongs to; buckets then hold whole layers
  // (shard::layer_buckets). overlap: the parameters get post-accumulate hooks, so that an armed
  // backward starts each bucket's all-reduce as soon as its last gradient is made (ZeRO's
  // gradients stage has hooks of its own: no overlap there).
  GradSync(Params params, std::function<GradPlacement(const std::string&)> placement, std::shared_ptr<Mesh> mesh,
           size_t bucket_bytes = 25u << 20, bool overlap = false, const std::vector<int>& layer = {});
  ~GradSync();
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  // After backward: all buckets packed and all-reduced over the world (one collective each,
  // issued in the same order on every rank, overlapping each other); the gradients become
  // views of the summed buckets.
  void sync();
  // Overlapped: arm before the backward whose gradients are the step's (the last micro-step);
  // each bucket completed in it is packed into one flat tensor (its gradients become views of
  // it, the separate ones let go) and all-reduced asynchronously, buckets from the last to the
  // first. finish() starts what backward left and waits for all: the gradients are synced.
  void arm();
  void finish();
  size_t buckets() const { return buckets_.size(); }
  size_t bytes_per_step() const;  // bytes all-reduced per sync

  struct Overlap;
  struct Hook;

 private:
  friend struct Hook;
  struct Entry {
    at::Tensor param;
    double scale;
  };
  void gradient_made(size_t bucket, size_t entry);
  Pending launch(size_t bucket);  // pack, grads become views, all-reduce asynchronously

  Params params_;
  std::vector<std::vector<Entry>> buckets_;
  std::shared_ptr<Mesh> mesh_;
  std::shared_ptr<Overlap> overlap_;  // shared with the hooks; null without overlap
};

}  // namespace halo::parallel
