// Pure maths of gradient buckets and ZeRO's chunks: which parameters share a bucket (a fixed
// order every rank and the memory planner agree on) and each rank's equal slice of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace halo::shard {

// ZeRO's buckets (ShardedState's flat storage, reduce-scattered and gathered whole).
constexpr int64_t kStateBucketBytes = 25 << 20;
// The gradient all-reduce's buckets (GradSync in the trainer): small enough that most of them
// go while backward still runs.
constexpr int64_t kSyncBucketBytes = 4 << 20;

// The buckets over parameters of `bytes` each (in order; a negative entry needs no gradient
// and joins none): a new bucket when `bucket_bytes` would overflow or `group` (a dtype) changes.
// Each bucket lists indices into `bytes`.
std::vector<std::vector<size_t>> state_buckets(const std::vector<int64_t>& bytes, const std::vector<int>& group,
                                               int64_t bucket_bytes);

// GradSync's buckets: whole layers (`layer` is equal for one layer's parameters, which are
// consecutive) packed in order while they fit in `bucket_bytes`, a layer larger than that
// alone, a new bucket where `group` (a dtype) changes. A bucket is then complete when the
// backward of its first layer ends, never inside a layer's backward (which the memory planner's
// walk of the step assumes).
std::vector<std::vector<size_t>> layer_buckets(const std::vector<int64_t>& bytes, const std::vector<int>& layer,
                                               const std::vector<int>& group, int64_t bucket_bytes);

// Elements per rank when `elements` are cut into `world` equal chunks (the last padded).
int64_t chunk_elements(int64_t elements, int world);

}  // namespace halo::shard
