// Halo's AdamW and SGD against LibTorch's own torch::optim implementations, LAMB's trust
// ratio by hand, the warm-up + cosine schedule, and the loss scaler's decisions.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <optional>
#include <utility>

#include "support/IntraOpThreads.h"
#include "train/ClassificationData.h"
#include "train/LossScaler.h"
#include "train/LrSchedule.h"
#include "train/Optimizer.h"

namespace halo::train {
namespace {

// Three steps with fixed gradients on 2-D parameters (decay applies to both sides).
void compare(config::OptimizerKind name, torch::optim::Optimizer& ref, std::vector<torch::Tensor>& ref_params) {
  torch::manual_seed(0);
  std::vector<torch::Tensor> mine;
  Optimizer::Params named;
  for (size_t i = 0; i < ref_params.size(); ++i) {
    mine.push_back(ref_params[i].detach().clone().requires_grad_(true));
    named.emplace_back("p" + std::to_string(i), mine.back());
  }
  Optimizer opt(named, {name, 0.05, 0.9, 0.9, 0.999, 1e-8});
  for (int s = 0; s < 3; ++s) {
    for (size_t i = 0; i < mine.size(); ++i) {
      torch::Tensor g = torch::randn_like(mine[i]);
      mine[i].mutable_grad() = g.clone();
      ref_params[i].mutable_grad() = g.clone();
    }
    opt.step(0.01);
    ref.step();
  }
  for (size_t i = 0; i < mine.size(); ++i)
    EXPECT_TRUE(torch::allclose(mine[i], ref_params[i], 1e-6, 1e-7)) << config::name_of(name) << " param " << i;
}

TEST(Optimizer, AdamWMatchesLibTorch) {
  std::vector<torch::Tensor> p{torch::randn({4, 3}, torch::kFloat64).requires_grad_(true),
                               torch::randn({2, 5}, torch::kFloat64).requires_grad_(true)};
  torch::optim::AdamW ref(p, torch::optim::AdamWOptions(0.01).weight_decay(0.05).betas({0.9, 0.999}).eps(1e-8));
  compare(config::OptimizerKind::AdamW, ref, p);
}

TEST(Optimizer, SgdMomentumMatchesLibTorch) {
  std::vector<torch::Tensor> p{torch::randn({4, 3}, torch::kFloat64).requires_grad_(true)};
  torch::optim::SGD ref(p, torch::optim::SGDOptions(0.01).momentum(0.9).weight_decay(0.05));
  compare(config::OptimizerKind::Sgd, ref, p);
}

TEST(Optimizer, LambScalesTheAdamUpdateByTheTrustRatio) {
  torch::Tensor p = torch::full({2, 2}, 2.0, torch::kFloat64).requires_grad_(true);
  Optimizer opt({{"w", p}}, {config::OptimizerKind::Lamb, 0.0, 0.9, 0.9, 0.999, 1e-8});
  p.mutable_grad() = torch::full({2, 2}, 0.5, torch::kFloat64);
  opt.step(0.1);
  // Step 1: bias-corrected m = g, v = g^2, update = g/|g| = 1 per entry; ||p|| = 4,
  // ||update|| = 2, trust 2: p = 2 - 0.1 * 2 * 1.
  EXPECT_NEAR(p[0][0].item<double>(), 2.0 - 0.2, 1e-6);
}

TEST(Optimizer, StateRoundTripsAndRefusesAMismatch) {
  torch::Tensor p = torch::randn({3, 3}).requires_grad_(true);
  Optimizer a({{"w", p}}, {config::OptimizerKind::AdamW});
  p.mutable_grad() = torch::ones({3, 3});
  a.step(0.1);
  std::map<std::string, at::Tensor> st;
  for (auto& [k, v] : a.state()) st[k] = v.clone();
  Optimizer b({{"w", p}}, {config::OptimizerKind::AdamW});
  b.load_state(st);
  EXPECT_EQ(b.steps(), 1);
  st["w.exp_avg"] = torch::zeros({2});
  EXPECT_ANY_THROW(b.load_state(st));
  EXPECT_FALSE(config::from_string<config::OptimizerKind>("rmsprop"));  // refused by the experiment parser
}

TEST(LrSchedule, WarmupThenCosineToTheFloor) {
  LrSchedule s{1.0, 4, 14, 0.1};
  EXPECT_DOUBLE_EQ(s.at(0), 0.25);
  EXPECT_DOUBLE_EQ(s.at(3), 1.0);
  EXPECT_DOUBLE_EQ(s.at(4), 1.0);
  EXPECT_NEAR(s.at(13), 0.1, 1e-12);
  for (int i = 5; i < 14; ++i) {
    EXPECT_LT(s.at(i), s.at(i - 1));
  }
  EXPECT_DOUBLE_EQ(scaled_lr(1e-3, 512, 256), 2e-3);
}

TEST(LossScaler, BacksOffOnOverflowAndGrowsAfterARun) {
  LossScaler s(true, 1024.0, 3);
  EXPECT_TRUE(s.update(true));
  EXPECT_DOUBLE_EQ(s.scale(), 512.0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(s.update(false));
  }
  EXPECT_DOUBLE_EQ(s.scale(), 1024.0);
  LossScaler off(false);
  EXPECT_DOUBLE_EQ(off.scale(), 1.0);
  EXPECT_TRUE(off.update(true));  // non-finite gradients still skip the step
  EXPECT_DOUBLE_EQ(off.scale(), 1.0);
}

TEST(ClassificationData, SamplesArePureFunctionsOfTheirIndex) {
  ClassificationData t(3, 32, 64, 5, 7);
  auto a = t.batch(10, 2), b = t.batch(11, 1), c = t.batch(10, 2);
  EXPECT_EQ(a.images.sizes(), (std::vector<int64_t>{2, 3, 3, 32, 64}));
  EXPECT_TRUE(torch::equal(a.images, c.images));
  EXPECT_TRUE(torch::equal(a.images[1], b.images[0]));
  EXPECT_TRUE(a.labels.max().item<int64_t>() < 5 && a.labels.min().item<int64_t>() >= 0);
}

// A CPU run draws its images channels-last: the same values to the bit, whole or a stripe, in
// memory its stem conv reads in place.
TEST(ClassificationData, ChannelsLastImagesHoldTheSameValues) {
  ClassificationData t(2, 16, 80, 5, 3);
  for (const auto& columns :
       {std::optional<std::pair<int64_t, int64_t>>{}, std::optional{std::pair<int64_t, int64_t>{23, 61}}}) {
    const ClassificationSample plain = t.batch(4, 3, columns), last = t.batch(4, 3, columns, true);
    EXPECT_TRUE(torch::equal(plain.images, last.images));
    EXPECT_TRUE(torch::equal(plain.labels, last.labels));
    const int64_t cols = last.images.size(-1);
    const at::Tensor stripe = last.images.view({6, 3, 16, cols});
    EXPECT_TRUE(stripe.is_contiguous(at::MemoryFormat::ChannelsLast)) << cols << " columns";
    EXPECT_TRUE(plain.images.is_contiguous());
  }
}

// The samples of a batch split over the intra-op threads (each draws from its own generators):
// the same bits on one thread and on two, whole or a stripe, in either layout.
TEST(ClassificationData, SamplesSplitOverThreadsHoldTheSameBits) {
  ClassificationData t(2, 64, 160, 5, 11);
  for (const auto& columns :
       {std::optional<std::pair<int64_t, int64_t>>{}, std::optional{std::pair<int64_t, int64_t>{17, 145}}})
    for (const bool channels_last : {false, true}) {
      const ClassificationSample one = [&] {
        const testing::IntraOpThreads threads(1);
        return t.batch(5, 7, columns, channels_last);
      }();
      const ClassificationSample two = [&] {
        const testing::IntraOpThreads threads(2);
        return t.batch(5, 7, columns, channels_last);
      }();
      EXPECT_TRUE(torch::equal(one.images, two.images)) << channels_last;
      EXPECT_TRUE(torch::equal(one.labels, two.labels));
      EXPECT_EQ(two.labels.dtype(), torch::kInt64);
      EXPECT_EQ(two.labels.sizes(), (std::vector<int64_t>{7}));
    }
}

}  // namespace
}  // namespace halo::train
