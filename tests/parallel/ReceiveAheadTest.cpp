// Halo exchanges over receives posted a message ahead: the split rule both ends share, and
// on real Gloo ranks every byte arriving where it belongs while message sizes grow, shrink,
// vanish and repeat to the same peer within one exchange, over several dtypes.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "parallel/Mesh.h"
#include "parallel/ReceiveAhead.h"
#include "support/RankHarness.h"

namespace halo::parallel {
namespace {

std::vector<std::pair<int64_t, int64_t>> spans(int64_t n, int64_t capacity) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const shard::Span& s : split_for_receive_ahead(n, capacity)) out.emplace_back(s.begin, s.end);
  return out;
}

TEST(ReceiveAheadSplit, FillsTheReceivePostedAheadThenSendsTheRest) {
  using V = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(spans(100, 0), (V{{0, 100}}));  // first message on a link: nothing posted ahead
  EXPECT_EQ(spans(100, 100), (V{{0, 100}}));
  EXPECT_EQ(spans(60, 100), (V{{0, 60}}));  // smaller: fits the receive ahead
  EXPECT_EQ(spans(250, 100), (V{{0, 100}, {100, 250}}));
  EXPECT_EQ(spans(0, 100), V{});
  EXPECT_EQ(spans(0, 0), V{});
}

// Element j of message `m` from rank `src` to rank `dst`: a value no other message holds.
at::Tensor message(int src, int dst, int m, int64_t n, torch::Dtype dt) {
  return (torch::arange(n, torch::kFloat64) + 1000.0 * m + 100000.0 * src + 10000000.0 * dst).to(dt);
}

class ReceiveAheadRanks : public ::testing::TestWithParam<int> {};

TEST_P(ReceiveAheadRanks, EveryMessageLandsWhereItBelongs) {
  const int world = GetParam();
  testing::RankHarness h(world);
  if (h.is_rank()) {
    auto mesh = h.join({1, world});
    Communicator& w = mesh->world();
    const int me = h.rank();
    // Per exchange: element counts (one message per count to each peer) and dtype.
    struct Step {
      std::vector<int64_t> counts;
      torch::Dtype dtype;
    };
    const std::vector<Step> steps{{{5}, torch::kFloat32},        {{5}, torch::kFloat32}, {{12}, torch::kFloat64},
                                  {{3}, torch::kInt64},          {{0}, torch::kFloat32}, {{7, 30}, torch::kFloat32},
                                  {{30000, 2}, torch::kFloat32}, {{1}, torch::kFloat64}, {{30000}, torch::kFloat32}};
    int m = 0;
    for (const Step& s : steps) {
      std::vector<P2POp> ops;
      std::vector<std::tuple<int, int, at::Tensor>> expect;  // (peer, message, buffer)
      for (int peer = 0; peer < world; ++peer) {
        if (peer == me) continue;
        for (size_t k = 0; k < s.counts.size(); ++k) {
          const int id = m + static_cast<int>(k);
          at::Tensor in = torch::full({s.counts[k]}, -1, s.dtype);
          ops.push_back({P2POp::Kind::Recv, peer, in});
          expect.emplace_back(peer, id, in);
          ops.push_back({P2POp::Kind::Send, peer, message(me, peer, id, s.counts[k], s.dtype)});
        }
      }
      w.exchange(std::move(ops)).wait();
      for (const auto& [peer, id, in] : expect)
        EXPECT_TRUE(torch::equal(in, message(peer, me, id, in.numel(), s.dtype)))
            << "rank " << me << " from " << peer << ", message " << id;
      m += static_cast<int>(s.counts.size());
    }
    return;
  }
  h.run_ranks();
}

INSTANTIATE_TEST_SUITE_P(Ranks, ReceiveAheadRanks, ::testing::Values(2, 3));

}  // namespace
}  // namespace halo::parallel
