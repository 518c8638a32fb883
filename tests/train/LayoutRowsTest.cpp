// The layout event's rows: halos and received bytes of a striped layer, the gather, the
// replicated part; the OpenLane-V2 task's whole model, its shapes equal to what its modules
// compute; the first step's input preview.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>

#include <torch/torch.h>

#include "parallel/Mesh.h"
#include "train/LayoutRows.h"
#include "train/OpenLaneTask.h"
#include "train/Trainer.h"

namespace halo::train {
namespace {

using protocol::LayoutPart;
using Shape = std::array<int64_t, 4>;

TEST(LayoutRows, AStripedLayerReceivesItsHaloColumnsOfEveryInputChannelAndRow) {
  const shard::Partition in = shard::even_partition(64, 2);
  const protocol::LayoutLayer row =
      striped_row({"stages.0.blocks.0.conv_dw", {7, 1, 3, 1}, in, in, 8, 16, 8, 16}, 4, 4);
  EXPECT_EQ(row.part, LayoutPart::Sharded);
  ASSERT_EQ(row.ranks.size(), 2u);
  EXPECT_EQ(row.ranks[0].halo_left, 0);
  EXPECT_EQ(row.ranks[0].halo_right, 3);
  EXPECT_EQ(row.ranks[1].halo_left, 3);
  EXPECT_EQ(row.ranks[0].received_bytes, 3 * 8 * 16 * 4 * 4);  // columns x channels x rows x images x bytes
  EXPECT_EQ(row.ranks[1].shape, (Shape{4, 8, 16, 32}));
  EXPECT_EQ(row.ranks[1].activation_bytes, 4 * 8 * 16 * 32 * 4);
  // A patchify conv whose stripes line up receives nothing.
  const protocol::LayoutLayer stem =
      striped_row({"stem.0", {4, 4, 0, 1}, shard::even_partition(256, 2), in, 3, 64, 8, 16}, 4, 4);
  EXPECT_EQ(stem.ranks[0].received_bytes + stem.ranks[1].received_bytes, 0);
}

TEST(LayoutRows, TheGatherReceivesTheOtherRanksColumnsAndAReplicatedLayerNothing) {
  const shard::Partition part(12, {{0, 4}, {4, 8}, {8, 12}});
  const protocol::LayoutLayer g = gather_row("gather", part, 16, 2, 3, 2);
  EXPECT_EQ(g.part, LayoutPart::Gather);
  for (const auto& r : g.ranks) {
    EXPECT_EQ(r.shape, (Shape{3, 16, 2, 12}));
    EXPECT_EQ(r.received_bytes, 8 * 16 * 2 * 3 * 2);
    EXPECT_EQ(r.activation_bytes, 12 * 16 * 2 * 3 * 2);
  }
  EXPECT_EQ(g.ranks[1].halo_left, 4);
  EXPECT_EQ(g.ranks[1].halo_right, 4);
  const protocol::LayoutLayer h = replicated_row("lc_head", {2, 50, 16, 1}, 12, 3, 4);
  EXPECT_EQ(h.part, LayoutPart::Replicated);
  ASSERT_EQ(h.ranks.size(), 3u);
  EXPECT_EQ(h.ranks[2].activation_bytes, 2 * 50 * 16 * 4);
  EXPECT_EQ(h.ranks[2].received_bytes, 0);
}

config::ExperimentConfig small_openlane() {
  config::ExperimentConfig c;
  c.task = config::Task::OpenLaneV2;
  c.model.arch = "convnext_test";
  c.model.dim = 16;
  c.data.views = 2;
  c.data.height = 64;
  c.data.width = 128;
  c.data.batch = 2;
  c.data.workers = 0;
  c.schedule.steps = 1;
  return c;
}

TEST(LayoutRows, TheOpenLaneModelIsLaidOutWholeWithTheShapesItsModulesCompute) {
  const config::ExperimentConfig cfg = small_openlane();
  Trainer trainer(cfg, parallel::Mesh::solo());
  const protocol::LayoutEvent e = trainer.layout_event();
  std::map<std::string, protocol::LayoutLayer> by_name;
  std::vector<std::string> order;
  for (const auto& l : e.layers) by_name[l.name] = l, order.push_back(l.name);
  const std::vector<std::string> tail(order.end() - 9, order.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"img_neck.lateral_convs.0", "img_neck.lateral_convs.1",
                                            "img_neck.fpn_convs.0", "gather (img_neck -> img_view_transformer)",
                                            "img_view_transformer", "lc_head", "te_head", "lclc_head", "lcte_head"}));
  EXPECT_EQ(by_name["img_neck.fpn_convs.0"].part, LayoutPart::Sharded);
  EXPECT_EQ(by_name["gather (img_neck -> img_view_transformer)"].part, LayoutPart::Gather);
  EXPECT_EQ(by_name["lcte_head"].part, LayoutPart::Replicated);

  // The same shapes from the modules themselves.
  const auto mesh = parallel::Mesh::solo();
  OpenLaneTask task(cfg, torch::kCPU, *mesh);
  auto& m = dynamic_cast<model::OpenLaneBaselineImpl&>(task.module());
  torch::NoGradGuard no_grad;
  const int64_t B = 2, V = 2;
  const auto stages =
      m.img_backbone->forward_stages(parallel::shard_evenly(torch::randn({B * V, 3, 64, 128}), mesh->sp_ptr()));
  const at::Tensor neck = m.img_neck->forward(stages[2], stages[3]).local;  // (B*V, D, H/16, W/16)
  auto shape_of = [](const at::Tensor& t) {
    Shape s{1, 1, 1, 1};
    for (int64_t i = 0; i < t.dim(); ++i) s[static_cast<size_t>(i)] = t.size(i);
    return s;
  };
  EXPECT_EQ(by_name["img_neck.fpn_convs.0"].ranks[0].shape, shape_of(neck));
  EXPECT_EQ(by_name["gather (img_neck -> img_view_transformer)"].ranks[0].shape, shape_of(neck));
  const at::Tensor lidar2img = torch::eye(4).expand({B, V, 4, 4}).contiguous();
  const at::Tensor image_hw = torch::tensor({64.0, 128.0}).expand({B, V, 2}).contiguous();
  const at::Tensor bev = m.img_view_transformer->forward(neck, lidar2img, image_hw, {64, 128});
  EXPECT_EQ(by_name["img_view_transformer"].ranks[0].shape, shape_of(bev));
  const at::Tensor lanes = std::get<2>(m.lc_head->forward(bev));  // (B, Ql, D)
  const at::Tensor front = neck.view({B, V, neck.size(1), neck.size(2), neck.size(3)}).select(1, 0);
  const at::Tensor te = std::get<2>(m.te_head->forward(front));  // (B, Qt, D)
  EXPECT_EQ(by_name["lc_head"].ranks[0].shape, shape_of(lanes));
  EXPECT_EQ(by_name["te_head"].ranks[0].shape, shape_of(te));
  EXPECT_EQ(by_name["lclc_head"].ranks[0].shape, shape_of(m.lclc_head->forward(lanes, lanes)));
  EXPECT_EQ(by_name["lcte_head"].ranks[0].shape, shape_of(m.lcte_head->forward(lanes, te)));
}

TEST(LayoutRows, TheFirstStepKeepsAPreviewOfItsViewsOnlyWhenAsked) {
  config::ExperimentConfig cfg = small_openlane();
  cfg.schedule.steps = 2;
  Trainer trainer(cfg, parallel::Mesh::solo());
  const std::string dir = ::testing::TempDir() + "halo-preview-" + std::to_string(::getpid());
  trainer.step();
  EXPECT_EQ(trainer.write_preview(dir), 0);  // not asked for
  trainer.keep_preview();
  trainer.step();
  EXPECT_EQ(trainer.write_preview(dir), 2);  // one per view
  EXPECT_EQ(trainer.write_preview(dir), 0);  // handed over once
  for (int v = 0; v < 2; ++v)
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / protocol::preview_file(v, 0)));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace halo::train
