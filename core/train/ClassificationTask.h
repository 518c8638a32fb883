// Task "convnext": multi-view classification with any backbone (ConvNeXt, ResNet) on generated samples
// (ClassificationData); the class logits are the mean over a sample's views, the loss their cross-entropy.
#pragma once

#include <cstdint>

#include <c10/core/Device.h>

#include "config/ExperimentConfig.h"
#include "train/ClassificationData.h"
#include "train/TrainTask.h"

namespace halo::train {

class ClassificationTask : public TrainTask {
 public:
  // Builds the model (weights from the current torch seed) on `device`; util::Error for an
  // unknown model.arch.
  ClassificationTask(const config::ExperimentConfig& cfg, const c10::Device& device);
  // The model alone, on the CPU (weights from the current torch seed).
  static std::shared_ptr<model::BackboneImpl> make_model(const config::ExperimentConfig& cfg);

  torch::nn::Module& module() override { return *model_; }
  std::shared_ptr<model::BackboneImpl> backbone() const override { return model_; }
  parallel::GradPlacement placement(const std::string& name) const override;
  // {"loss": cross-entropy of the view-averaged logits}
  std::map<std::string, at::Tensor> losses(int64_t first, int64_t count,
                                           std::shared_ptr<parallel::Communicator> sp) override;

 private:
  std::shared_ptr<model::BackboneImpl> model_;
  ClassificationData data_;
  c10::Device device_;
  int64_t views_, height_, width_;
};

}  // namespace halo::train
