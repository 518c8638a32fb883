// Each sp rank generates its own stripe of the samples (equal to those columns of the whole; on
// CPU channels-last), on CUDA the next one on another thread; the head's gradients are Replicate.
#include "train/ClassificationTask.h"

#include <torch/torch.h>

#include <utility>

#include "parallel/ShardedTensor.h"

namespace halo::train {

ClassificationTask::ClassificationTask(const config::ExperimentConfig& cfg, const c10::Device& device)
    : model_(make_model(cfg)),
      data_(cfg.data.views, cfg.data.height, cfg.data.width, cfg.model.num_classes, cfg.train.seed),
      device_(device),
      channels_last_(config::images_channels_last(config::Task::Convnext,
                                                  device.is_cuda() ? config::Device::Cuda : config::Device::Cpu)),
      views_(cfg.data.views),
      height_(cfg.data.height),
      width_(cfg.data.width),
      prefetch_(device.is_cuda()) {
  model_->to(device_);
}

ClassificationSample ClassificationTask::sample(int64_t first, int64_t count, std::pair<int64_t, int64_t> columns) {
  ClassificationSample b;
  if (ahead_ && ahead_->first == first && ahead_->count == count && ahead_->columns == columns) {
    b = ahead_->sample.get();  // made while the last step trained
    ++made_ahead_;
  } else {
    b = data_.batch(first, count, columns, channels_last_);
  }
  ahead_.reset();  // a wrong guess's batch is dropped once made (its future waits)
  if (prefetch_ && last_first_ && first > *last_first_) {
    const int64_t next = first + (first - *last_first_);
    const bool pin = device_.is_cuda();  // page-locked: the copy to the GPU can run on its own
    ahead_ = Ahead{next, count, columns, std::async(std::launch::async, [this, next, count, columns, pin] {
                     ClassificationSample s = data_.batch(next, count, columns, channels_last_);
                     if (pin) s.images = s.images.pin_memory();
                     return s;
                   })};
  }
  last_first_ = first;
  return b;
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
  ClassificationSample b = sample(first, count, std::pair{mine.begin, mine.end});
  at::Tensor stripe = b.images.view({count * views_, 3, height_, mine.size()})
                          .to(device_, /*non_blocking=*/device_.is_cuda());  // (N*V, 3, H, W/sp)
  parallel::ShardedTensor x{stripe, std::move(part), std::move(sp)};
  offer_preview(x.local, views_);
  at::Tensor logits = model_->forward(x).view({count, views_, -1}).mean(1).to(at::kFloat);  // (N, classes)
  return {{"loss", torch::cross_entropy_loss(logits, b.labels.to(device_))}};
}

}  // namespace halo::train
