// Buckets fill greedily in parameter order (DDP's rule without its reverse order); chunks
// round up so that every rank's slice has the same length, which c10d's collectives need.
#include "shard/StateBuckets.h"

namespace halo::shard {

std::vector<std::vector<size_t>> state_buckets(const std::vector<int64_t>& bytes, const std::vector<int>& group,
                                               int64_t bucket_bytes) {
  std::vector<std::vector<size_t>> buckets;
  int64_t filled = 0;
  int current = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] < 0) continue;
    const int g = i < group.size() ? group[i] : 0;
    if (buckets.empty() || filled + bytes[i] > bucket_bytes || g != current) {
      buckets.emplace_back();
      filled = 0;
      current = g;
    }
    buckets.back().push_back(i);
    filled += bytes[i];
  }
  return buckets;
}

int64_t chunk_elements(int64_t elements, int world) { return (elements + world - 1) / world; }

}  // namespace halo::shard
