// Saved bytes of sharded layers on real ranks (Gloo over loopback): each rank keeps its
// stripe plus the halo columns its convolution reads, as the planner predicts per rank.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <tuple>

#include <fmt/format.h>
#include <torch/torch.h>

#include "arch/ConvNeXtLayers.h"
#include "memory/ActivationModel.h"
#include "model/ConvNeXt.h"
#include "support/RankHarness.h"
#include "train/MemoryTracker.h"

namespace halo::memory {
namespace {

const int64_t kBatch = 2, kHeight = 64, kWidth = 256;
const char* kLayers[] = {"stem", "stages.1.downsample", "stages.1.blocks.0", "stages.3.blocks.0"};

ActivationInput input(int sp, int rank, bool cheap) {
  ActivationInput in;
  in.recompute_cheap = cheap;
  in.layers = arch::convnext_layers(*arch::find_convnext_variant("convnext_test"), 10);
  in.images = kBatch;
  in.height = kHeight;
  in.width = kWidth;
  in.sp = sp;
  in.rank = rank;
  return in;
}

// Bytes a rank still holds after the layer's forward, beyond its input and output.
void run_rank(int sp, bool cheap, const testing::RankHarness& h) {
  train::MemoryTracker::install();
  torch::manual_seed(0);
  auto mesh = h.join({1, sp});
  const auto v = *arch::find_convnext_variant("convnext_test");
  model::ConvNeXt net(v, 10);
  net->set_recompute_cheap(cheap);
  const auto layers = activation_layers(input(sp, h.rank(), cheap));
  std::ofstream out(fmt::format("{}/r{}.txt", h.dir(), h.rank()));
  for (const char* name : kLayers) {
    const LayerMemory* l = nullptr;
    for (const auto& x : layers)
      if (x.name == name) l = &x;
    const std::string n = name;
    const int stage = n == "stem" ? 0 : n[7] - '0';
    const bool ds = n.find("downsample") != std::string::npos;
    const int64_t c_in = n == "stem" ? 3 : v.dims[static_cast<size_t>(ds ? stage - 1 : stage)];
    const int64_t f = n == "stem" ? 1 : (ds ? int64_t{2} : int64_t{4}) << stage;  // input resolution divisor
    at::Tensor full = torch::randn({kBatch, c_in, kHeight / f, kWidth / f});
    parallel::ShardedTensor x = parallel::shard_evenly(full, mesh->sp_ptr());
    if (n != "stem") x.local.requires_grad_();
    const int64_t before = train::MemoryTracker::cpu().current;
    at::Tensor y;
    if (n == "stem") {
      y = net->stem->at<model::LayerNorm2dImpl>(1).forward(net->stem->at<model::ShardedConv2dImpl>(0).forward(x).local);
    } else {
      auto& st = net->stages->at<model::ConvNeXtStageImpl>(static_cast<size_t>(stage));
      if (ds)
        y = st.downsample->at<model::ShardedConv2dImpl>(1)
                .forward(x.with(st.downsample->at<model::LayerNorm2dImpl>(0).forward(x.local)))
                .local;
      else
        y = st.blocks->at<model::ConvNeXtBlockImpl>(0).forward(x).local;
    }
    const int64_t seen = train::MemoryTracker::cpu().current - before - static_cast<int64_t>(y.nbytes());
    out << name << " " << seen << " " << l->saved << " " << l->halo_left << " " << l->halo_right << "\n";
  }
}

// (sp, parallel.recompute cheap)
class ShardedLayer : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(ShardedLayer, SavedBytesIncludeHaloColumns) {
  const auto [sp, cheap] = GetParam();
  testing::RankHarness h(sp);
  if (h.is_rank()) return run_rank(sp, cheap, h);
  h.run_ranks();
  if (::testing::Test::HasFatalFailure()) return;
  for (int r = 0; r < sp; ++r) {
    std::ifstream in(fmt::format("{}/r{}.txt", h.dir(), r));
    int rows = 0;
    std::string name;
    int64_t seen = 0, predicted = 0, left = 0, right = 0;
    while (in >> name >> seen >> predicted >> left >> right) {
      ++rows;
      EXPECT_EQ(seen, predicted) << name << " on rank " << r << " of " << sp;
      if (name.find("blocks") != std::string::npos) {
        EXPECT_EQ(left + right, 6) << name;  // 7x7 depthwise: 3 + 3
      }
    }
    EXPECT_EQ(rows, 4) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, ShardedLayer, ::testing::Combine(::testing::Values(2, 4), ::testing::Bool()),
                         [](const auto& info) {
                           return "sp" + std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_cheap" : "_plain");
                         });

}  // namespace
}  // namespace halo::memory
