// `eval`: the OpenLane-V2 scores of the model on data.eval_split (rank 0, every
// train.eval_every steps; read by the history's evaluations and metrics).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

struct EvalEvent {
  static constexpr const char* name = names::eval;
  int rank = 0;
  int64_t step = 0;                                              // the step after which it was scored (required)
  int64_t steps_trained = 0;                                     // step + 1
  std::string split;                                             // "val", "train", ...
  double det_l = 0, det_t = 0, top_ll = 0, top_lt = 0, ols = 0;  // the devkit's scores, in [0, 1]
  int64_t frames = 0;                                            // frames scored
  std::string predictions;                                       // the predictions file (devkit format) rank 0 wrote
  // The scores by their wire names (DET_l, DET_t, TOP_ll, TOP_lt, OLS), for the history's metrics.
  std::vector<std::pair<std::string, double>> scores() const;
  bool operator==(const EvalEvent&) const = default;
};

void to_json(nlohmann::json& j, const EvalEvent& e);
void from_json(const nlohmann::json& j, EvalEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
