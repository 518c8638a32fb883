// The parts of the task interface every task shares: parameters by name, and no evaluation
// or layout rows after the backbone unless the task has them; the input preview.
#include "train/TrainTask.h"

#include "data/PreviewImage.h"

namespace halo::train {

std::optional<OpenLaneEvaluation> TrainTask::evaluate(std::shared_ptr<parallel::Communicator>, bool) {
  return std::nullopt;
}

std::vector<protocol::LayoutLayer> TrainTask::layout_tail(const std::vector<arch::LayerShape>&, int64_t,
                                                          int64_t) const {
  return {};
}

std::vector<std::pair<std::string, at::Tensor>> TrainTask::named_parameters() {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (auto& p : module().named_parameters()) out.emplace_back(p.key(), p.value());
  return out;
}

void TrainTask::offer_preview(const at::Tensor& stripe, int64_t views) {
  if (!want_preview_) return;
  want_preview_ = false;
  preview_ = data::preview_of(stripe.narrow(0, 0, views));
}

std::optional<at::Tensor> TrainTask::take_preview() { return std::exchange(preview_, std::nullopt); }

}  // namespace halo::train
