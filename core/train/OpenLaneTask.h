// The OpenLane-V2 training task of one rank: the baseline model, its seven losses and the
// batches it trains on (the data module's pipeline on data.root, or generated frames).
#pragma once

#include <map>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>

#include "model/OpenLaneBaseline.h"
#include "model/OpenLaneLoss.h"
#include "parallel/Partition.h"
#include "train/ExperimentConfig.h"
#include "train/OpenLaneSynthetic.h"

namespace halo::data {
class MultiViewLoader;
}
namespace halo::parallel {
class Mesh;
}

namespace halo::train {

class OpenLaneTask {
 public:
  // Builds the model (weights from the current torch seed) on `device`; with data.source
  // "openlanev2" a pipeline over data.root's train split that decodes only this rank's stripe.
  OpenLaneTask(const ExperimentConfig& cfg, const c10::Device& device, const parallel::Mesh& mesh);
  ~OpenLaneTask();
  model::OpenLaneBaseline& net() { return model_; }
  // Forward of samples [first, first + count) (generated frames; the pipeline instead
  // gives its next batch, starting a new epoch when one ends) striped over `sp`; the seven
  // weighted losses and "loss" (their sum), identical on every sp rank.
  std::map<std::string, at::Tensor> losses(int64_t first, int64_t count, std::shared_ptr<parallel::Communicator> sp);

 private:
  model::OpenLaneBaseline model_{nullptr};
  model::OpenLaneLoss loss_;
  OpenLaneSynthetic data_;
  c10::Device device_;
  std::unique_ptr<data::MultiViewLoader> loader_;
  parallel::Partition part_;  // the padded width over the sp ranks (pipeline only)
  int64_t epoch_ = 0, views_ = 0;
};

}  // namespace halo::train
