// Gradient sync on a dp=2 x sp=2 mesh of real ranks: Partial gradients are summed over sp
// and averaged over dp, Replicate gradients averaged over dp; buckets in a fixed order.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <torch/torch.h>

#include "parallel/GradSync.h"
#include "support/RankHarness.h"

namespace halo::parallel {
namespace {

// Rank r's gradient of parameter j before the sync (replicated ones equal over sp).
torch::Tensor local_grad(int rank, int j, bool replicated, int sp) {
  const int who = replicated ? rank / sp : rank;
  return torch::full({3 + j}, 1.0 + who + 10.0 * j, torch::kFloat64);
}

TEST(GradSync, SumsOverSpAndAveragesOverDp) {
  const int dp = 2, sp = 2;
  testing::RankHarness h(dp * sp);
  if (h.is_rank()) {
    auto mesh = h.join({dp, sp});
    GradSync::Params params;
    for (int j = 0; j < 5; ++j) {
      const std::string name = j < 3 ? fmt::format("stages.{}.w", j) : fmt::format("head.{}", j);
      torch::Tensor p = torch::zeros({3 + j}, torch::kFloat64).requires_grad_(true);
      p.mutable_grad() = local_grad(h.rank(), j, j >= 3, sp);
      params.emplace_back(name, p);
    }
    // Tiny buckets: several collectives in flight at once.
    GradSync sync(
        params,
        [](const std::string& n) {
          return n.rfind("head.", 0) == 0 ? GradPlacement::Replicate : GradPlacement::Partial;
        },
        mesh, 40);
    EXPECT_GE(sync.buckets(), 3u);
    sync.sync();
    for (int j = 0; j < 5; ++j) {
      torch::Tensor want = torch::zeros({3 + j}, torch::kFloat64);
      for (int r = 0; r < dp * sp; ++r) want += local_grad(r, j, j >= 3, sp);
      want /= (j >= 3 ? dp * sp : dp);
      EXPECT_TRUE(torch::allclose(params[static_cast<size_t>(j)].second.grad(), want, 0, 1e-12))
          << params[static_cast<size_t>(j)].first << " rank " << h.rank();
    }
    return;
  }
  h.run_ranks();
}

// The trainer's sync: buckets of whole layers, each all-reduced as soon as backward completes
// it; the result equals the sync after backward, and a second gradient for a parameter in one
// armed step is refused (its bucket may already be on its way).
TEST(GradSync, InBackwardEqualsTheSyncAfterIt) {
  const int dp = 1, sp = 2;
  testing::RankHarness h(dp * sp);
  if (h.is_rank()) {
    auto mesh = h.join({dp, sp});
    auto make = [] {
      GradSync::Params params;
      for (int j = 0; j < 6; ++j)
        params.emplace_back(fmt::format("layer{}.w{}", j / 2, j % 2),
                            torch::full({3 + j}, 1.0 + j, torch::kFloat64).requires_grad_(true));
      return params;
    };
    auto loss = [&](const GradSync::Params& params) {  // rank-dependent gradients
      torch::Tensor l = torch::zeros({}, torch::kFloat64);
      for (size_t j = 0; j < params.size(); ++j)
        l = l + (params[j].second * params[j].second).sum() * (1.0 + h.rank() + static_cast<double>(j));
      return l;
    };
    auto partial = [](const std::string&) { return GradPlacement::Partial; };
    GradSync::Params after = make(), during = make();
    GradSync reference(after, partial, mesh, 40);
    loss(after).backward();
    reference.sync();
    // Three layers of two parameters; 40 bytes fit no layer whole: a bucket per layer.
    GradSync overlapped(during, partial, mesh, 40, /*overlap=*/true, {0, 0, 1, 1, 2, 2});
    EXPECT_EQ(overlapped.buckets(), 3u);
    overlapped.arm();
    loss(during).backward();
    overlapped.finish();
    for (size_t j = 0; j < during.size(); ++j)
      EXPECT_TRUE(torch::equal(during[j].second.grad(), after[j].second.grad()))
          << during[j].first << " rank " << h.rank();

    // A second backward while armed (as a reentrant recompute would): every bucket went.
    for (auto& [name, p] : during) p.mutable_grad().reset();
    overlapped.arm();
    loss(during).backward();
    EXPECT_THROW(loss(during).backward(), std::exception);
    overlapped.finish();  // the first backward's all-reduces
    return;
  }
  h.run_ranks();
}

}  // namespace
}  // namespace halo::parallel
