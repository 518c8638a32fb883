// The OpenLane-V2 training task of one rank: the baseline model, its seven losses and the
// batches it trains on (the data module's pipeline on data.root, or generated frames).
#pragma once

#include <map>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>

#include "config/ExperimentConfig.h"
#include "eval/Evaluate.h"
#include "eval/Predictions.h"
#include "model/OpenLaneBaseline.h"
#include "model/OpenLaneLoss.h"
#include "shard/Partition.h"
#include "train/OpenLaneSynthetic.h"

namespace halo::data {
class MultiViewLoader;
}
namespace halo::parallel {
class Mesh;
}

namespace halo::train {

// What evaluating on data.eval_split gives on the scoring rank (empty elsewhere).
struct OpenLaneEvaluation {
  eval::Scores scores;
  eval::Predictions predictions;  // one entry per frame of the split, keyed "split/segment/timestamp"
};

class OpenLaneTask {
 public:
  // Builds the model (weights from the current torch seed) on `device`; with data.source
  // "openlanev2" a pipeline over data.root's train split that decodes only this rank's stripe.
  OpenLaneTask(const config::ExperimentConfig& cfg, const c10::Device& device, const parallel::Mesh& mesh);
  ~OpenLaneTask();
  model::OpenLaneBaseline& net() { return model_; }
  // Forward of samples [first, first + count) (generated frames; the pipeline instead
  // gives its next batch, starting a new epoch when one ends) striped over `sp`; the seven
  // weighted losses and "loss" (their sum), identical on every sp rank.
  std::map<std::string, at::Tensor> losses(int64_t first, int64_t count, std::shared_ptr<parallel::Communicator> sp);
  // Every rank: the model in eval mode, without gradients, over all frames of data.eval_split
  // in order (each rank its stripe, as in training). With `score` (one rank): decodes the
  // outputs (OpenLanePredictor) and scores them against the frames' annotation with
  // eval::evaluate, exactly as the devkit. Needs data.source openlanev2.
  OpenLaneEvaluation evaluate(std::shared_ptr<parallel::Communicator> sp, bool score);

 private:
  model::OpenLaneBaseline model_{nullptr};
  model::OpenLaneLoss loss_;
  OpenLaneSynthetic data_;
  c10::Device device_;
  std::unique_ptr<data::MultiViewLoader> loader_;
  std::unique_ptr<data::MultiViewLoader> eval_loader_;  // data.eval_split, when train.eval_every > 0
  shard::Partition part_;                               // the padded width over the sp ranks (pipeline only)
  int64_t epoch_ = 0, views_ = 0;
};

}  // namespace halo::train
