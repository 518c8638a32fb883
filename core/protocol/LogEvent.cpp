// The log pseudo-event's keys and their JSON.
#include "protocol/LogEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

namespace {
constexpr char kText[] = "text";
}

void to_json(nlohmann::json& j, const LogEvent& e) { j = {{keys::event, LogEvent::name}, {kText, e.text}}; }

void from_json(const nlohmann::json& j, LogEvent& e) {
  const FieldReader r = FieldReader::event(j, LogEvent::name);
  e.text = r.text(kText);
}

}  // namespace halo::protocol
