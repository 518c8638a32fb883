// Splitting a full tensor into this rank's stripe (the input of a sharded model).
// Every sp rank reads the same sample and keeps only its columns.
#include "parallel/ShardedTensor.h"

#include <ATen/ATen.h>

namespace halo::parallel {

ShardedTensor shard_evenly(const at::Tensor& full, std::shared_ptr<Communicator> group) {
  shard::Partition part = shard::even_partition(full.size(-1), group->size());
  const shard::Span mine = part.span(group->rank());
  return {full.narrow(-1, mine.begin, mine.size()).contiguous(), std::move(part), std::move(group)};
}

}  // namespace halo::parallel
