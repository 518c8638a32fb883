// One case per config::Task; a new task is a TrainTask implementation and a case here.
#include "train/TaskFactory.h"

#include "train/ClassificationTask.h"
#include "train/OpenLaneTask.h"

namespace halo::train {

std::unique_ptr<TrainTask> make_task(const config::ExperimentConfig& cfg, const c10::Device& device,
                                     const parallel::Mesh& mesh) {
  switch (cfg.task) {
    case config::Task::OpenLaneV2:
      return std::make_unique<OpenLaneTask>(cfg, device, mesh);
    case config::Task::Convnext:
      break;
  }
  return std::make_unique<ClassificationTask>(cfg, device);
}

}  // namespace halo::train
