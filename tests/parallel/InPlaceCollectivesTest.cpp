// Reduce-scatter and all-gather of a flat bucket on real Gloo ranks (the right sums and chunks,
// no bucket-sized copy, which c10d's Gloo versions stage), and every_rank's vote.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "parallel/Mesh.h"
#include "support/RankHarness.h"
#include "train/MemoryTracker.h"

namespace halo::parallel {
namespace {

using train::MemoryTracker;

// Bytes allocated above the current ones while `op` runs.
template <class Op>
int64_t transient(Op op) {
  MemoryTracker::reset_peak();
  const int64_t before = MemoryTracker::cpu().current;
  op();
  return MemoryTracker::cpu().peak - before;
}

class InPlaceCollectives : public ::testing::TestWithParam<int> {};

TEST_P(InPlaceCollectives, GiveTheSumsAndChunksWithoutABucketSizedCopy) {
  const int world = GetParam();
  testing::RankHarness h(world);
  if (h.is_rank()) {
    MemoryTracker::install();
    auto mesh = h.join({1, world});
    Communicator& w = mesh->world();
    const int64_t c = 1 << 18;  // 1 MiB chunks
    const at::Tensor index = torch::arange(c * world, torch::kFloat32);
    at::Tensor flat = index * (h.rank() + 1);  // rank r holds (r + 1) * i
    at::Tensor chunk = torch::empty({c});
    EXPECT_EQ(transient([&] { w.reduce_scatter_sum_async(flat, chunk).wait(); }), 0);
    const float ranks_sum = static_cast<float>(world * (world + 1) / 2);
    EXPECT_TRUE(torch::equal(chunk, index.narrow(0, h.rank() * c, c) * ranks_sum));

    at::Tensor gathered = torch::full({c * world}, -1.0f);
    gathered.narrow(0, h.rank() * c, c).copy_(torch::full({c}, static_cast<float>(h.rank())));
    EXPECT_EQ(transient([&] { w.all_gather_in_place(gathered); }), 0);
    for (int r = 0; r < world; ++r)
      EXPECT_TRUE(torch::equal(gathered.narrow(0, r * c, c), torch::full({c}, static_cast<float>(r)))) << r;
    return;
  }
  h.run_ranks();
}

TEST_P(InPlaceCollectives, EveryRankIsTrueOnlyWhereAllRanksSayTrue) {
  const int world = GetParam();
  testing::RankHarness h(world);
  if (h.is_rank()) {
    auto mesh = h.join({1, world});
    Communicator& w = mesh->world();
    EXPECT_TRUE(w.every_rank(true));
    EXPECT_FALSE(w.every_rank(false));
    EXPECT_FALSE(w.every_rank(h.rank() != world - 1)) << "one rank says no";
    EXPECT_FALSE(w.every_rank(h.rank() == 0)) << "only one says yes";
    EXPECT_TRUE(Communicator::solo()->every_rank(true));
    EXPECT_FALSE(Communicator::solo()->every_rank(false));
    return;
  }
  h.run_ranks();
}

INSTANTIATE_TEST_SUITE_P(Ranks, InPlaceCollectives, ::testing::Values(2, 3));

}  // namespace
}  // namespace halo::parallel
