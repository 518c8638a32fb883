// Gradient buckets and ZeRO chunks: parameters fill buckets in order up to the size, a dtype
// change or an oversized parameter starts a new one, frozen ones join none; chunks round up.
#include <gtest/gtest.h>

#include "shard/StateBuckets.h"

namespace halo::shard {
namespace {

using Buckets = std::vector<std::vector<size_t>>;

TEST(StateBuckets, FillInOrderUpToTheSize) {
  EXPECT_EQ(state_buckets({40, 40, 30, 100, 10}, {}, 100), (Buckets{{0, 1}, {2}, {3}, {4}}));
  EXPECT_EQ(state_buckets({10, 20, 30}, {}, 100), (Buckets{{0, 1, 2}}));
  EXPECT_EQ(state_buckets({250, 10}, {}, 100), (Buckets{{0}, {1}}));  // larger than a bucket: its own
}

TEST(StateBuckets, FrozenParametersAndDtypeChanges) {
  EXPECT_EQ(state_buckets({10, -1, 10}, {}, 100), (Buckets{{0, 2}}));
  EXPECT_EQ(state_buckets({10, 10, 10}, {0, 1, 1}, 100), (Buckets{{0}, {1, 2}}));
  EXPECT_TRUE(state_buckets({}, {}, 100).empty());
}

TEST(StateBuckets, ChunksAreEqualAndCoverTheBucket) {
  EXPECT_EQ(chunk_elements(10, 4), 3);
  EXPECT_EQ(chunk_elements(12, 4), 3);
  EXPECT_EQ(chunk_elements(1, 8), 1);
  EXPECT_EQ(chunk_elements(7, 1), 7);
  for (int64_t n : {1, 5, 63, 64, 65})
    for (int world : {1, 2, 3, 8}) {
      const int64_t c = chunk_elements(n, world);
      EXPECT_GE(c * world, n);
      EXPECT_LT((c - 1) * world, n);
    }
}

}  // namespace
}  // namespace halo::shard
