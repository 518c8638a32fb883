// Model options from the experiment (backbone variant, model.dim, the loss.* weights); the
// outputs go to float32 before the losses so mixed precision only touches the network.
#include "train/OpenLaneTask.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "util/Error.h"

namespace halo::train {

namespace {

model::OpenLaneBaselineOptions options(const ExperimentConfig& cfg) {
  model::OpenLaneBaselineOptions o;
  o.dim = cfg.model.dim;
  o.ffn = 4 * cfg.model.dim;
  if (o.dim % o.heads != 0)
    throw util::Error(fmt::format("model.dim {} is not a multiple of the {} attention heads", o.dim, o.heads),
                      "set model.dim to a multiple of 8 (the baseline uses 128)");
  return o;
}

model::ConvNeXtVariant backbone(const ExperimentConfig& cfg) {
  if (cfg.data.source != "synthetic")
    throw util::Error("data.source \"openlanev2\" is not wired to the openlanev2 task yet",
                      "use data.source \"synthetic\" for now");
  auto v = model::find_convnext_variant(cfg.model.arch);
  if (!v)
    throw util::Error(fmt::format("model.arch '{}' is not a ConvNeXt backbone the openlanev2 task can build", cfg.model.arch),
                      "choose one of: " + model::convnext_variant_names());
  if (cfg.data.height % 32 != 0 || cfg.data.width % (32 * cfg.parallel.sp) != 0)
    throw util::Error(fmt::format("data.height {} / data.width {} do not tile the stride-32 map over sp = {}",
                                  cfg.data.height, cfg.data.width, cfg.parallel.sp),
                      fmt::format("use a height that is a multiple of 32 and a width that is a multiple of {}",
                                  32 * cfg.parallel.sp));
  return *v;
}

model::OpenLaneOutputs to_float(model::OpenLaneOutputs o) {
  for (at::Tensor* t : {&o.lane_logits, &o.lane_control, &o.lane_points, &o.lane_embed, &o.te_logits, &o.te_boxes,
                        &o.te_embed, &o.lclc_logits, &o.lcte_logits})
    *t = t->to(torch::kFloat32);
  return o;
}

}  // namespace

OpenLaneTask::OpenLaneTask(const ExperimentConfig& cfg, const c10::Device& device)
    : loss_(model::OpenLaneLossWeights{cfg.loss.lc_cls, cfg.loss.lc_bbox, cfg.loss.te_cls, cfg.loss.te_bbox,
                                       cfg.loss.te_iou, cfg.loss.lclc, cfg.loss.lcte},
            options(cfg).bev),
      data_(cfg.data.views, cfg.data.height, cfg.data.width, cfg.train.seed),
      device_(device) {
  model_ = model::OpenLaneBaseline(backbone(cfg), options(cfg));
  model_->to(device_);
}

std::map<std::string, at::Tensor> OpenLaneTask::losses(int64_t first, int64_t count,
                                                       std::shared_ptr<parallel::Communicator> sp) {
  OpenLaneSample b = data_.batch(first, count);
  at::Tensor images = b.images.flatten(0, 1).to(device_);  // (N*V, 3, H, W)
  parallel::ShardedTensor x = parallel::shard_evenly(images, std::move(sp));
  model::OpenLaneOutputs out = model_->forward(x, b.lidar2img.to(device_), b.image_hw.to(device_));
  return loss_(to_float(std::move(out)), b.targets);
}

}  // namespace halo::train
