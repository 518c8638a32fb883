// The task interface: the factory's choice per config::Task, placements, the classification
// loss against a per-view reference and with batches made ahead, and the OpenLane-V2 task's
// refusal of view counts.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "model/ConvNeXt.h"
#include "parallel/Mesh.h"
#include "train/ClassificationData.h"
#include "train/ClassificationTask.h"
#include "train/OpenLaneTask.h"
#include "train/TaskFactory.h"
#include "util/Error.h"

namespace halo::train {
namespace {

config::ExperimentConfig classification() {
  config::ExperimentConfig c;
  c.model.arch = "convnext_test";
  c.model.num_classes = 5;
  c.data.views = 3;
  c.data.height = 32;
  c.data.width = 64;
  c.data.batch = 2;
  c.train.seed = 4;
  return c;
}

config::ExperimentConfig openlane(int64_t views) {
  config::ExperimentConfig c = classification();
  c.task = config::Task::OpenLaneV2;
  c.model.dim = 16;
  c.data.views = views;
  return c;
}

TEST(TrainTask, TheFactoryBuildsTheExperimentsTask) {
  const auto mesh = parallel::Mesh::solo();
  auto cls = make_task(classification(), torch::kCPU, *mesh);
  auto ol = make_task(openlane(3), torch::kCPU, *mesh);
  ASSERT_NE(dynamic_cast<ClassificationTask*>(cls.get()), nullptr);
  ASSERT_NE(dynamic_cast<OpenLaneTask*>(ol.get()), nullptr);
  EXPECT_EQ(cls->placement("head.fc.weight"), parallel::GradPlacement::Replicate);
  EXPECT_EQ(cls->placement("stem.0.weight"), parallel::GradPlacement::Partial);
  EXPECT_EQ(ol->placement("img_backbone.stem.0.weight"), parallel::GradPlacement::Partial);
  EXPECT_EQ(ol->placement("lc_head.cls_branch.bias"), parallel::GradPlacement::Replicate);
  // The backbone is the ConvNeXt inside the module: its parameters are the module's.
  EXPECT_EQ(cls->backbone().get(), &cls->module());
  const auto& ol_params = ol->named_parameters();
  EXPECT_EQ(ol_params.front().first, "img_backbone.stem.0.weight");
  EXPECT_TRUE(ol_params.front().second.is_same(ol->backbone()->named_parameters()["stem.0.weight"]));
  EXPECT_FALSE(cls->evaluate(mesh->sp_ptr(), true).has_value());  // classification has no evaluation
}

TEST(ClassificationTask, LossIsTheCrossEntropyOfTheViewAveragedLogits) {
  const config::ExperimentConfig cfg = classification();
  const auto mesh = parallel::Mesh::solo();
  torch::manual_seed(1);
  ClassificationTask task(cfg, torch::kCPU);
  const at::Tensor loss = task.losses(10, 2, mesh->sp_ptr()).at("loss");
  // Reference: the same weights, one view at a time, the log-softmax written out.
  const ClassificationSample b = ClassificationData(3, 32, 64, 5, cfg.train.seed).batch(10, 2);
  auto& model = dynamic_cast<model::ConvNeXtImpl&>(task.module());
  torch::NoGradGuard no_grad;
  double want = 0;
  for (int64_t n = 0; n < 2; ++n) {
    at::Tensor mean_logits = torch::zeros({5});
    for (int64_t v = 0; v < 3; ++v)
      mean_logits += model.forward(parallel::shard_evenly(b.images[n][v].unsqueeze(0), mesh->sp_ptr()))[0] / 3;
    const int64_t label = b.labels[n].item<int64_t>();
    want += (torch::logsumexp(mean_logits, 0) - mean_logits[label]).item<double>() / 2;
  }
  EXPECT_NEAR(loss.item<double>(), want, 1e-5 * std::abs(want));
  EXPECT_EQ(loss.dtype(), torch::kFloat);
}

// Batches made ahead on another thread (as on CUDA) are the ones made in place, also after a
// jump the guess missed (a resumed run, another data-parallel stride).
TEST(ClassificationTask, BatchesMadeAheadEqualTheOnesMadeInPlace) {
  const config::ExperimentConfig cfg = classification();
  const auto mesh = parallel::Mesh::solo();
  torch::manual_seed(1);
  ClassificationTask plain(cfg, torch::kCPU);
  torch::manual_seed(1);
  ClassificationTask ahead(cfg, torch::kCPU);
  ahead.set_prefetch(true);
  torch::NoGradGuard no_grad;
  for (const int64_t first : {0, 2, 4, 6, 20, 22, 24, 30}) {
    const at::Tensor a = plain.losses(first, 2, mesh->sp_ptr()).at("loss");
    const at::Tensor b = ahead.losses(first, 2, mesh->sp_ptr()).at("loss");
    EXPECT_TRUE(torch::equal(a, b)) << "first " << first << ": " << a.item<double>() << " vs " << b.item<double>();
  }
  EXPECT_EQ(ahead.batches_made_ahead(), 3);  // 4, 6 and 24 were guessed; 20, 22 and 30 were not
  EXPECT_EQ(plain.batches_made_ahead(), 0);
}

TEST(OpenLaneTask, GeneratedFramesTakeTheViewCountsOfTheRigs) {
  const auto mesh = parallel::Mesh::solo();
  try {
    const OpenLaneTask eight(openlane(8), torch::kCPU, *mesh);
    FAIL() << "8 generated views were accepted";
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.problem()).find("data.views is 8"), std::string::npos) << e.problem();
    EXPECT_NE(std::string(e.hint()).find("6 (subset B"), std::string::npos) << e.hint();
  }
  OpenLaneTask six(openlane(6), torch::kCPU, *mesh);  // subset B
  const auto losses = six.losses(0, 1, mesh->sp_ptr());
  EXPECT_EQ(losses.size(), 8u);
  EXPECT_TRUE(std::isfinite(losses.at("loss").item<double>()));
}

}  // namespace
}  // namespace halo::train
