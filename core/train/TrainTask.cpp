// The parts of the task interface every task shares: parameters by name, and no evaluation
// unless the task has one.
#include "train/TrainTask.h"

namespace halo::train {

std::optional<OpenLaneEvaluation> TrainTask::evaluate(std::shared_ptr<parallel::Communicator>, bool) {
  return std::nullopt;
}

std::vector<std::pair<std::string, at::Tensor>> TrainTask::named_parameters() {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (auto& p : module().named_parameters()) out.emplace_back(p.key(), p.value());
  return out;
}

}  // namespace halo::train
