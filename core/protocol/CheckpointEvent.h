// `checkpoint`: rank 0 saved a resume checkpoint (read by the history's artifacts and the
// workbench's checkpoint list).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

struct CheckpointEvent {
  static constexpr const char* name = names::checkpoint;
  int rank = 0;
  int64_t step = 0;   // steps trained when saved (the file is checkpoints/step-<step>.pt)
  std::string path;   // the checkpoint file (required)
  int64_t bytes = 0;  // its size
  bool operator==(const CheckpointEvent&) const = default;
};

void to_json(nlohmann::json& j, const CheckpointEvent& e);
void from_json(const nlohmann::json& j, CheckpointEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
