// The done event's keys and their JSON.
#include "protocol/DoneEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

namespace {
constexpr char kSteps[] = "steps";
}

void to_json(nlohmann::json& j, const DoneEvent& e) {
  j = {{keys::event, DoneEvent::name}, {keys::rank, e.rank}, {kSteps, e.steps}};
}

void from_json(const nlohmann::json& j, DoneEvent& e) {
  const FieldReader r = FieldReader::event(j, DoneEvent::name);
  e.rank = static_cast<int>(r.integer(keys::rank));
  e.steps = r.integer(kSteps);
}

}  // namespace halo::protocol
