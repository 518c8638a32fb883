// `heartbeat`: a rank is alive, written every few seconds by a thread of every worker and
// read by the launcher's silence watch (neither events.jsonl nor the history keeps it).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

struct HeartbeatEvent {
  static constexpr const char* name = names::heartbeat;
  int rank = 0;
  bool operator==(const HeartbeatEvent&) const = default;
};

void to_json(nlohmann::json& j, const HeartbeatEvent& e);
void from_json(const nlohmann::json& j, HeartbeatEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
