// Task "convnext": multi-view classification with any backbone (ConvNeXt, ResNet) on generated samples
// (ClassificationData); the class logits are the mean over a sample's views, the loss their cross-entropy.
#pragma once

#include <cstdint>
#include <future>
#include <optional>

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
  // Make the next batch on another thread while this one trains (on by default on CUDA, where
  // the CPU would otherwise make the images while the GPU waits; off on the CPU, where it would
  // take the rank's own cores). The next batch is guessed from the last two calls' `first`;
  // a wrong guess is dropped and the batch made in place, so the data never change.
  void set_prefetch(bool on) { prefetch_ = on; }
  int64_t batches_made_ahead() const { return made_ahead_; }  // taken from the other thread so far

 private:
  ClassificationSample sample(int64_t first, int64_t count, std::pair<int64_t, int64_t> columns);

  std::shared_ptr<model::BackboneImpl> model_;
  ClassificationData data_;
  c10::Device device_;
  bool channels_last_;  // the images drawn channels-last (config::images_channels_last)
  int64_t views_, height_, width_;
  bool prefetch_;
  std::optional<int64_t> last_first_;
  int64_t made_ahead_ = 0;
  struct Ahead {
    int64_t first, count;
    std::pair<int64_t, int64_t> columns;
    std::future<ClassificationSample> sample;
  };
  std::optional<Ahead> ahead_;
};

}  // namespace halo::train
