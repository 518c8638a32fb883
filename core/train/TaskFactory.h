// The one place that looks at config::Task: builds the TrainTask the experiment names, so the
// Trainer never branches on which task it trains.
#pragma once

#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "config/ExperimentConfig.h"
#include "train/TrainTask.h"

namespace halo::parallel {
class Mesh;
}

namespace halo::train {

// Task "convnext": ClassificationTask; "openlanev2": OpenLaneTask. The model's weights come
// from the current torch seed. Throws util::Error for settings the task cannot use.
std::unique_ptr<TrainTask> make_task(const config::ExperimentConfig& cfg, const c10::Device& device,
                                     const parallel::Mesh& mesh);

// The task's model alone, on the CPU, without data or a mesh (e.g. to check model.pretrained
// against before any rank starts), and where its backbone sits ("img_backbone." or "").
struct BareModel {
  std::shared_ptr<torch::nn::Module> module;
  std::string backbone_prefix;
};
BareModel make_model(const config::ExperimentConfig& cfg);

}  // namespace halo::train
