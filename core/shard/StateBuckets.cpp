// Buckets fill greedily in parameter order (DDP's rule without its reverse order); chunks
// round up so that every rank's slice has the same length, which c10d's collectives need.
#include "shard/StateBuckets.h"

#include <numeric>

namespace halo::shard {

std::vector<std::vector<size_t>> state_buckets(const std::vector<int64_t>& bytes, const std::vector<int>& group,
                                               int64_t bucket_bytes) {
  std::vector<int> own(bytes.size());  // every parameter a layer of its own
  std::iota(own.begin(), own.end(), 0);
  return layer_buckets(bytes, own, group, bucket_bytes);
}

std::vector<std::vector<size_t>> layer_buckets(const std::vector<int64_t>& bytes, const std::vector<int>& layer,
                                               const std::vector<int>& group, int64_t bucket_bytes) {
  // The runs of one layer (and group), in order.
  struct Run {
    std::vector<size_t> params;
    int64_t bytes = 0;
    int layer = 0, group = 0;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] < 0) continue;
    const int l = layer.at(i), g = i < group.size() ? group[i] : 0;
    if (runs.empty() || runs.back().layer != l || runs.back().group != g) runs.push_back({{}, 0, l, g});
    runs.back().params.push_back(i);
    runs.back().bytes += bytes[i];
  }
  std::vector<std::vector<size_t>> buckets;
  int64_t filled = 0;
  int current = 0;
  for (const Run& r : runs) {
    if (buckets.empty() || filled + r.bytes > bucket_bytes || r.group != current) {
      buckets.emplace_back();
      filled = 0;
      current = r.group;
    }
    buckets.back().insert(buckets.back().end(), r.params.begin(), r.params.end());
    filled += r.bytes;
  }
  return buckets;
}

int64_t chunk_elements(int64_t elements, int world) { return (elements + world - 1) / world; }

}  // namespace halo::shard
