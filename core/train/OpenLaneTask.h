// The OpenLane-V2 training task of one rank: the baseline model, its seven losses and the
// batches it trains on (synthetic until the data module's pipeline is merged).
#pragma once

#include <map>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>

#include "model/OpenLaneBaseline.h"
#include "model/OpenLaneLoss.h"
#include "train/ExperimentConfig.h"
#include "train/OpenLaneSynthetic.h"

namespace halo::train {

class OpenLaneTask {
 public:
  // Builds the model (weights from the current torch seed) on `device`.
  OpenLaneTask(const ExperimentConfig& cfg, const c10::Device& device);
  model::OpenLaneBaseline& net() { return model_; }
  // Forward of samples [first, first + count) with images striped over `sp`; the seven
  // weighted losses and "loss" (their sum), identical on every sp rank.
  std::map<std::string, at::Tensor> losses(int64_t first, int64_t count, std::shared_ptr<parallel::Communicator> sp);

 private:
  model::OpenLaneBaseline model_{nullptr};
  model::OpenLaneLoss loss_;
  OpenLaneSynthetic data_;
  c10::Device device_;
};

}  // namespace halo::train
