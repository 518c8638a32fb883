// Each sp rank generates its own stripe of the samples (equal to those columns of the whole);
// the head runs on replicated pooled features, so its weights' gradients are Replicate.
#include "train/ClassificationTask.h"

#include <torch/torch.h>

#include "parallel/ShardedTensor.h"

namespace halo::train {

ClassificationTask::ClassificationTask(const config::ExperimentConfig& cfg, const c10::Device& device)
    : model_(make_model(cfg)),
      data_(cfg.data.views, cfg.data.height, cfg.data.width, cfg.model.num_classes, cfg.train.seed),
      device_(device),
      views_(cfg.data.views),
      height_(cfg.data.height),
      width_(cfg.data.width) {
  model_->to(device_);
}

std::shared_ptr<model::BackboneImpl> ClassificationTask::make_model(const config::ExperimentConfig& cfg) {
  return model::make_backbone(cfg.model.arch, cfg.model.num_classes, 3, cfg.model.drop_path);
}

parallel::GradPlacement ClassificationTask::placement(const std::string& name) const {
  return model_->grad_placement(name);
}

std::map<std::string, at::Tensor> ClassificationTask::losses(int64_t first, int64_t count,
                                                             std::shared_ptr<parallel::Communicator> sp) {
  shard::Partition part = shard::even_partition(width_, sp->size());
  const shard::Span mine = part.span(sp->rank());
  ClassificationSample b = data_.batch(first, count, std::pair{mine.begin, mine.end});
  at::Tensor stripe = b.images.view({count * views_, 3, height_, mine.size()}).to(device_);  // (N*V, 3, H, W/sp)
  parallel::ShardedTensor x{stripe, std::move(part), std::move(sp)};
  offer_preview(x.local, views_);
  at::Tensor logits = model_->forward(x).view({count, views_, -1}).mean(1).to(at::kFloat);  // (N, classes)
  return {{"loss", torch::cross_entropy_loss(logits, b.labels.to(device_))}};
}

}  // namespace halo::train
