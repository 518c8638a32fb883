// The heartbeat event's JSON: the event name and the rank only.
#include "protocol/HeartbeatEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

void to_json(nlohmann::json& j, const HeartbeatEvent& e) {
  j = {{keys::event, HeartbeatEvent::name}, {keys::rank, e.rank}};
}

void from_json(const nlohmann::json& j, HeartbeatEvent& e) {
  const FieldReader r = FieldReader::event(j, HeartbeatEvent::name);
  e.rank = static_cast<int>(r.integer(keys::rank));
}

}  // namespace halo::protocol
