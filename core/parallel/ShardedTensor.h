// A rank's stripe of a (B, C, H, W) feature map split along W over its sp group, with the
// partition (who holds which columns) and the group it is shared with.
#pragma once

#include <memory>

#include <ATen/core/Tensor.h>

#include "parallel/Communicator.h"
#include "shard/Partition.h"

namespace halo::parallel {

struct ShardedTensor {
  at::Tensor local;                     // (B, C, H, W/world), this rank's columns
  shard::Partition part;                // spans of every rank of the group
  std::shared_ptr<Communicator> group;  // the sp group

  int rank() const { return group->rank(); }
  int64_t global_width() const { return part.global_width(); }
  // Result of a per-pixel op (LayerNorm, MLP, GELU, residual): same layout, new values.
  ShardedTensor with(at::Tensor t) const { return {std::move(t), part, group}; }
};

// Splits a full (B, C, H, W) tensor evenly along W and keeps this rank's stripe.
ShardedTensor shard_evenly(const at::Tensor& full, std::shared_ptr<Communicator> group);

}  // namespace halo::parallel
