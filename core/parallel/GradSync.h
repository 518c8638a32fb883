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
  GradSync(Params params, std::function<GradPlacement(const std::string&)> placement, std::shared_ptr<Mesh> mesh,
           size_t bucket_bytes = 25u << 20);

  // After backward: all buckets all-reduced over the world (one collective each, issued
  // in the same order on every rank, overlapping each other), results written back.
  void sync();
  size_t buckets() const { return buckets_.size(); }
  size_t bytes_per_step() const;  // bytes all-reduced per sync

 private:
  struct Entry {
    at::Tensor param;
    double scale;
  };
  Params params_;
  std::vector<std::vector<Entry>> buckets_;
  std::shared_ptr<Mesh> mesh_;
};

}  // namespace halo::parallel
