// Gradient buckets and ZeRO chunks: parameters (or GradSync's whole layers) fill buckets in order
// up to the size, a dtype change or an oversized one starts a new one, frozen ones join none;
// chunks round up.
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

// GradSync's: whole layers packed up to the size, never a layer split (layer 1 below is over
// the size: a bucket of its own), a new bucket at a dtype change, frozen ones in none.
TEST(StateBuckets, LayerBucketsNeverSplitALayer) {
  EXPECT_EQ(layer_buckets({30, 30, 60, 60, 10, 10}, {0, 0, 1, 1, 2, 2}, {}, 100), (Buckets{{0, 1}, {2, 3}, {4, 5}}));
  EXPECT_EQ(layer_buckets({30, 30, 20, 10}, {0, 0, 1, 2}, {}, 100), (Buckets{{0, 1, 2, 3}}));
  EXPECT_EQ(layer_buckets({30, 30, 20, 10}, {0, 0, 1, 2}, {0, 0, 0, 1}, 100), (Buckets{{0, 1, 2}, {3}}));
  EXPECT_EQ(layer_buckets({30, -1, 20}, {0, 0, 1}, {}, 100), (Buckets{{0, 2}}));
  EXPECT_TRUE(layer_buckets({}, {}, {}, 100).empty());
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
