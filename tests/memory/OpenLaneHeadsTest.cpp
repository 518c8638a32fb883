// The planner's OpenLane-V2 neck and heads: their parameters are the model's, name for name and
// shape for shape, and the whole model's count is what `halo plan` and the workbench show.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "config/ExperimentConfig.h"
#include "memory/MemoryPlanner.h"
#include "memory/OpenLaneHeads.h"
#include "model/OpenLaneBaseline.h"

namespace halo::memory {
namespace {

class OpenLaneHeadsDims : public ::testing::TestWithParam<std::tuple<std::string, int64_t>> {};

TEST_P(OpenLaneHeadsDims, ParametersAreTheModelsNamesAndShapes) {
  const auto& [backbone, dim] = GetParam();
  model::OpenLaneBaselineOptions o;
  o.dim = dim;
  model::OpenLaneBaseline net(backbone, o);
  OpenLaneDims d;
  d.dim = dim;
  const auto expected =
      openlane_head_parameters(d, net->img_backbone->stage_channels(2), net->img_backbone->stage_channels(3));
  std::vector<std::pair<std::string, std::vector<int64_t>>> actual;
  int64_t total = 0;
  for (const auto& p : net->named_parameters()) {
    total += p.value().numel();
    if (p.key().rfind("img_backbone.", 0) == 0) continue;
    actual.emplace_back(p.key(), p.value().sizes().vec());
  }
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].first, expected[i].name) << i;
    EXPECT_EQ(actual[i].second, expected[i].shape) << expected[i].name;
  }
  // The whole model's count, as the planner reports it for an OpenLane-V2 experiment.
  config::ExperimentConfig cfg;
  cfg.task = config::Task::OpenLaneV2;
  cfg.model.arch = backbone;
  cfg.model.dim = dim;
  cfg.data.views = 7;
  cfg.data.height = 128;
  cfg.data.width = 256;
  EXPECT_EQ(predict(cfg).parameters, total);
}

INSTANTIATE_TEST_SUITE_P(Backbones, OpenLaneHeadsDims,
                         ::testing::Values(std::make_tuple("convnext_atto", 64), std::make_tuple("convnext_test", 32),
                                           std::make_tuple("resnet18", 128)));

}  // namespace
}  // namespace halo::memory
