// Width-sharded pooling: max (padding -inf) and average (zero padding, with or without
// counting the padding), plus global average pooling to a replicated (B, C).
#pragma once

#include <ATen/core/Tensor.h>

#include "parallel/ShardedTensor.h"
#include "shard/ConvSpec.h"

namespace halo::parallel {

// spec.groups is ignored; ceil_mode is not supported (floor, as PyTorch's default).
ShardedTensor sharded_max_pool2d(const ShardedTensor& x, const shard::ConvSpec& spec);
ShardedTensor sharded_avg_pool2d(const ShardedTensor& x, const shard::ConvSpec& spec, bool count_include_pad = true);

// Mean over H and W of the whole feature map: (B, C), identical on every rank.
at::Tensor global_avg_pool(const ShardedTensor& x);

}  // namespace halo::parallel
