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

class GradSync {
 public:
  using Params = std::vector<std::pair<std::string, at::Tensor>>;
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
