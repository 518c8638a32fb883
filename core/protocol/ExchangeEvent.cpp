// The exchange event's JSON: the steps measured and an object of milliseconds per layer.
#include "protocol/ExchangeEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

namespace {
constexpr char kSteps[] = "steps", kLayers[] = "layers";
}  // namespace

void to_json(nlohmann::json& j, const ExchangeEvent& e) {
  j = {{keys::event, ExchangeEvent::name}, {keys::rank, e.rank}, {kSteps, e.steps}, {kLayers, e.ms}};
}

void from_json(const nlohmann::json& j, ExchangeEvent& e) {
  const FieldReader r = FieldReader::event(j, ExchangeEvent::name);
  e.rank = static_cast<int>(r.integer(keys::rank));
  e.steps = r.integer(kSteps);
  e.ms = r.numbers(kLayers);
}

}  // namespace halo::protocol
