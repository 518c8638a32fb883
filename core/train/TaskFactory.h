// The one place that looks at config::Task: builds the TrainTask the experiment names, so the
// Trainer never branches on which task it trains.
#pragma once

#include <memory>

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

}  // namespace halo::train
