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

}  // namespace
}  // namespace halo::parallel
