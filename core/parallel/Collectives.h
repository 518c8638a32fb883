// Differentiable collectives between placements: Partial -> Replicate (two flavours, by
// who consumes the result), Shard(W) -> Replicate (all-gather) and Replicate -> Shard(W).
#pragma once

#include <memory>

#include <ATen/core/Tensor.h>

#include "parallel/Communicator.h"
#include "parallel/ShardedTensor.h"

namespace halo::parallel {

// Sum of per-rank partial values, consumed by replicated code (e.g. pooled features into
// the head). Backward is the identity: the incoming gradient is already replicated.
at::Tensor sum_to_replicated(const at::Tensor& partial, std::shared_ptr<Communicator> group);

// Sum of per-rank partial values consumed by sharded code on every rank (e.g. BatchNorm
// statistics). Backward sums the gradients over the group too.
at::Tensor sum_partials(const at::Tensor& partial, std::shared_ptr<Communicator> group);

// Shard(W) -> Replicate: the full (B, C, H, W) on every rank. Backward keeps own columns.
at::Tensor gather_width(const ShardedTensor& x);

// Replicate -> Shard(W): this rank's columns of a full tensor on `part`. Backward gathers.
ShardedTensor scatter_width(const at::Tensor& full, const shard::Partition& part, std::shared_ptr<Communicator> group);

}  // namespace halo::parallel
