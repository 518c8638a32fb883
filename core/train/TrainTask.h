// What the Trainer trains, whatever the task (classification, OpenLane-V2): the module and
// its parameters, the width-sharded backbone, each gradient's placement, losses, evaluation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include "model/Backbone.h"
#include "parallel/GradSync.h"
#include "protocol/LayoutEvent.h"
#include "train/OpenLaneEvaluation.h"

namespace halo::parallel {
class Communicator;
}

namespace halo::train {

class TrainTask {
 public:
  virtual ~TrainTask() = default;

  // The module whose parameters train, on the task's device.
  virtual torch::nn::Module& module() = 0;
  // The width-sharded backbone inside module(): its checkpointing, the shardability check
  // before training and the per-layer shapes of the layout event.
  virtual std::shared_ptr<model::BackboneImpl> backbone() const = 0;
  // Partial (summed over the sp group) or Replicate: where the gradient of parameter `name` lives.
  virtual parallel::GradPlacement placement(const std::string& name) const = 0;
  // Forward of samples [first, first + count) of the task's stream (a pipeline over files
  // gives its next batch instead), width-striped over `sp`: the loss terms by key and "loss",
  // the scalar that is back-propagated; float32 and identical on every sp rank.
  virtual std::map<std::string, at::Tensor> losses(int64_t first, int64_t count,
                                                   std::shared_ptr<parallel::Communicator> sp) = 0;
  // Every rank together: the model scored on the evaluation split (by the rank with `score`);
  // nullopt for a task without an evaluation.
  virtual std::optional<OpenLaneEvaluation> evaluate(std::shared_ptr<parallel::Communicator> sp, bool score);

  // The layout event's rows after the backbone's (whose shapes are `backbone`, for `images`
  // images per rank at `bytes_per` bytes per element): none for a classifier; a detector's
  // striped neck, the gather that ends the striped part and the replicated rest.
  virtual std::vector<protocol::LayoutLayer> layout_tail(const std::vector<arch::LayerShape>& backbone, int64_t images,
                                                         int64_t bytes_per) const;

  // module()'s parameters by name (timm names for the backbone), in registration order.
  std::vector<std::pair<std::string, at::Tensor>> named_parameters();

  // After keep_preview(), the next losses() keeps a small picture of its first sample's views
  // as this rank holds them (data::preview_of: (V, 3, h, w/sp) uint8); take_preview() hands
  // it over once. Nothing is kept otherwise.
  void keep_preview() { want_preview_ = true; }
  std::optional<at::Tensor> take_preview();

 protected:
  // For losses(): its input stripe (N*V, 3, H, W/sp), view-major per sample.
  void offer_preview(const at::Tensor& stripe, int64_t views);

 private:
  bool want_preview_ = false;
  std::optional<at::Tensor> preview_;
};

}  // namespace halo::train
