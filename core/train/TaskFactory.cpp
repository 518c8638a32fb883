// One case per config::Task; a new task is a TrainTask implementation and a case here.
#include "train/TaskFactory.h"

#include "train/ClassificationTask.h"
#include "train/OpenLaneTask.h"
#include "train/Pretrained.h"

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

BareModel make_model(const config::ExperimentConfig& cfg) {
  switch (cfg.task) {
    case config::Task::OpenLaneV2: {
      model::OpenLaneBaseline m = OpenLaneTask::make_model(cfg);
      return {m.ptr(), backbone_prefix(*m, *m->img_backbone)};
    }
    case config::Task::Convnext:
      break;
  }
  return {ClassificationTask::make_model(cfg), ""};
}

}  // namespace halo::train
