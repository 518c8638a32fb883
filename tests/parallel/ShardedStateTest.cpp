// ZeRO's gradients stage on a dp=2 x sp=2 mesh of real ranks: buckets reduce-scattered inside
// backward (as each one's last gradient is accumulated) give the chunks the after-backward
// reduce-scatter gives, and no whole gradient is left once backward returns.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <torch/torch.h>

#include "parallel/ShardedState.h"
#include "support/RankHarness.h"

namespace halo::parallel {
namespace {

// Four Linear layers (parameters in forward order), one sample per rank.
struct Chain {
  std::vector<torch::Tensor> weights;
  NamedParams params;
  explicit Chain(int layers) {
    torch::manual_seed(7);
    for (int i = 0; i < layers; ++i) {
      weights.push_back(torch::randn({16, 16}, torch::kFloat64).requires_grad_(true));
      params.emplace_back(fmt::format("stages.{}.weight", i), weights.back());
    }
  }
  void backward(int rank) {
    torch::manual_seed(100 + rank);
    torch::Tensor x = torch::randn({4, 16}, torch::kFloat64);
    for (const auto& w : weights) x = torch::tanh(torch::matmul(x, w));
    x.pow(2).sum().backward();
  }
};

auto partial = [](const std::string&) { return GradPlacement::Partial; };

TEST(ShardedState, BucketsReduceScatteredInBackwardEqualThoseAfterIt) {
  const int dp = 2, sp = 2;
  testing::RankHarness h(dp * sp);
  if (h.is_rank()) {
    auto mesh = h.join({dp, sp});
    // One parameter per bucket (16 x 16 doubles = 2 KiB): four collectives inside backward.
    Chain after(4), during(4);
    ShardedState a(after.params, partial, mesh, 2048), d(during.params, partial, mesh, 2048);
    ASSERT_EQ(d.buckets().size(), 4u);
    after.backward(h.rank());
    const std::vector<at::Tensor> want = a.reduce_scatter_gradients(true);
    d.arm_overlap();
    during.backward(h.rank());
    for (const auto& [name, p] : during.params)
      EXPECT_FALSE(p.grad().defined()) << name << ": still whole after backward, rank " << h.rank();
    const std::vector<at::Tensor> got = d.finish_overlap();
    ASSERT_EQ(got.size(), want.size());
    for (size_t b = 0; b < want.size(); ++b)
      EXPECT_TRUE(torch::equal(got[b], want[b])) << "bucket " << b << " rank " << h.rank();
    // Disarmed: the next backward keeps its gradients whole, as without ZeRO's overlap.
    during.backward(h.rank());
    for (const auto& [name, p] : during.params) EXPECT_TRUE(p.grad().defined()) << name;
    return;
  }
  h.run_ranks();
}

// A second backward while armed (a parameter's second gradient) is refused by name: its bucket
// may already have gone without it.
TEST(ShardedState, ASecondGradientInOneArmedBackwardIsRefused) {
  Chain chain(2);
  ShardedState s(chain.params, partial, Mesh::solo(), 2048);
  s.arm_overlap();
  chain.backward(0);
  try {
    chain.backward(0);
    ADD_FAILURE() << "a second backward while armed was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("stages.1.weight"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("second gradient"), std::string::npos) << e.what();
  }
}

// ZeRO's weights stage: a streamed unit's parameters have no storage until gathered, then hold
// the values they had (nested gathers counted); Whole keeps what is written through them.
TEST(ShardedState, StreamedUnitsAreWholeOnlyWhileGathered) {
  testing::RankHarness h(2);
  if (h.is_rank()) {
    auto mesh = h.join({1, 2});
    Chain chain(3), copy(3);
    // stages.0 stays whole everywhere; stages.1 and stages.2 stream as units "a" and "b".
    ShardedState s(chain.params, partial, mesh, 1 << 20, {"", "a", "b"});
    ASSERT_EQ(s.units(), (std::vector<std::string>{"a", "b"}));
    ASSERT_EQ(s.buckets().size(), 3u);  // a new bucket where the unit changes
    auto has_storage = [&](size_t i) { return chain.weights[i].storage().nbytes() > 0; };
    EXPECT_TRUE(has_storage(0));
    EXPECT_FALSE(has_storage(1));
    EXPECT_FALSE(has_storage(2));
    EXPECT_EQ(s.owned_parameters(1).numel(), 16 * 16 / 2);
    s.gather("a");
    s.gather("a");
    EXPECT_TRUE(torch::equal(chain.weights[1], copy.weights[1]));
    s.release("a");
    EXPECT_TRUE(has_storage(1)) << "still gathered once";
    s.release("a");
    EXPECT_FALSE(has_storage(1));
    s.gather("unknown");  // none of this state's: nothing happens
    {
      const ShardedState::Whole whole(s);
      EXPECT_TRUE(torch::equal(chain.weights[2], copy.weights[2]));
      torch::NoGradGuard no_grad;
      chain.weights[2].fill_(3.0);
    }
    EXPECT_FALSE(has_storage(2));
    EXPECT_TRUE(torch::equal(s.owned_parameters(2), torch::full({16 * 16 / 2}, 3.0, torch::kFloat64)));
    s.gather("b");
    s.release_all();
    EXPECT_FALSE(has_storage(2));
    return;
  }
  h.run_ranks();
}

}  // namespace
}  // namespace halo::parallel
