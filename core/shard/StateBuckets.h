// Pure maths of gradient buckets and ZeRO's chunks: which parameters share a bucket (a fixed
// order every rank and the memory planner agree on) and each rank's equal slice of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace halo::shard {

// The buckets over parameters of `bytes` each (in order; a negative entry needs no gradient
// and joins none): a new bucket when `bucket_bytes` would overflow or `group` (a dtype) changes.
// Each bucket lists indices into `bytes`.
std::vector<std::vector<size_t>> state_buckets(const std::vector<int64_t>& bytes, const std::vector<int>& group,
                                               int64_t bucket_bytes);

// Elements per rank when `elements` are cut into `world` equal chunks (the last padded).
int64_t chunk_elements(int64_t elements, int world);

}  // namespace halo::shard
