// The OpenLane-V2 training task of one rank: the baseline model, its seven losses and the
// frames it trains on (the data module's pipeline on data.root, or frames generated in memory).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "config/ExperimentConfig.h"
#include "data/FrameBatch.h"
#include "model/OpenLaneBaseline.h"
#include "model/OpenLaneLoss.h"
#include "shard/Partition.h"
#include "train/OpenLaneEvaluation.h"
#include "train/TrainTask.h"

namespace halo::data {
class MultiViewLoader;
class SynthStream;
}  // namespace halo::data
namespace halo::parallel {
class Mesh;
}

namespace halo::train {

class OpenLaneTask : public TrainTask {
 public:
  // Builds the model (weights from the current torch seed) on `device` and this rank's
  // frames: with data.source "openlanev2" a pipeline over data.root's train split, with
  // "synthetic" data::SynthStream (data.views 7: subset A, 6: subset B, 1..5: the first
  // cameras of subset A; util::Error otherwise). Either decodes only this rank's stripe.
  OpenLaneTask(const config::ExperimentConfig& cfg, const c10::Device& device, const parallel::Mesh& mesh);
  ~OpenLaneTask() override;
  // The model alone, on the CPU (weights from the current torch seed).
  static model::OpenLaneBaseline make_model(const config::ExperimentConfig& cfg);

  torch::nn::Module& module() override { return *model_; }
  std::shared_ptr<model::BackboneImpl> backbone() const override { return model_->img_backbone; }
  parallel::GradPlacement placement(const std::string& name) const override;
  // Forward of samples [first, first + count) (generated frames; the pipeline instead gives
  // its next batch, starting a new epoch when one ends); the seven weighted losses and
  // "loss" (their sum), identical on every sp rank.
  std::map<std::string, at::Tensor> losses(int64_t first, int64_t count,
                                           std::shared_ptr<parallel::Communicator> sp) override;
  // Every rank: the model in eval mode, without gradients, over all frames of data.eval_split
  // in order (each rank its stripe, as in training). With `score` (one rank): decodes the
  // outputs (OpenLanePredictor) and scores them against the frames' annotation with
  // eval::evaluate, exactly as the devkit. Needs data.source openlanev2 (util::Error otherwise).
  std::optional<OpenLaneEvaluation> evaluate(std::shared_ptr<parallel::Communicator> sp, bool score) override;
  // After the backbone: the FPN's convs on stripes (img_neck.*), the all-gather of its
  // stride-16 map, then the replicated view transform (B, D, Y, X) and heads (B, Q, D, 1),
  // topology (B, Ql, Ql | Qt, 1).
  std::vector<protocol::LayoutLayer> layout_tail(const std::vector<arch::LayerShape>& backbone, int64_t images,
                                                 int64_t bytes_per) const override;

 private:
  data::FrameBatch next_batch(int64_t first, int64_t count);

  model::OpenLaneBaseline model_{nullptr};
  model::OpenLaneLoss loss_;
  c10::Device device_;
  std::unique_ptr<data::SynthStream> synth_;            // data.source synthetic
  std::unique_ptr<data::MultiViewLoader> loader_;       // data.source openlanev2
  std::unique_ptr<data::MultiViewLoader> eval_loader_;  // data.eval_split, when train.eval_every > 0
  shard::Partition part_;                               // the padded width over the sp ranks
  int64_t epoch_ = 0, views_ = 0;
};

}  // namespace halo::train
