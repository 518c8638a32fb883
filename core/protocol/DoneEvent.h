// `done`: a rank finished its schedule (the workbench counts them; the history flushes).
#pragma once

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

struct DoneEvent {
  static constexpr const char* name = names::done;
  int rank = 0;
  int64_t steps = 0;  // steps trained in all
  bool operator==(const DoneEvent&) const = default;
};

void to_json(nlohmann::json& j, const DoneEvent& e);
void from_json(const nlohmann::json& j, DoneEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
