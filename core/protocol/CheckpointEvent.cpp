// The checkpoint event's keys and their JSON; "path" is required on reading.
#include "protocol/CheckpointEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

namespace {
constexpr char kStep[] = "step", kPath[] = "path", kBytes[] = "bytes";
}

void to_json(nlohmann::json& j, const CheckpointEvent& e) {
  j = {{keys::event, CheckpointEvent::name}, {keys::rank, e.rank}, {kStep, e.step}, {kPath, e.path}, {kBytes, e.bytes}};
}

void from_json(const nlohmann::json& j, CheckpointEvent& e) {
  const FieldReader r = FieldReader::event(j, CheckpointEvent::name);
  r.require(kPath);
  e.rank = static_cast<int>(r.integer(keys::rank));
  e.step = r.integer(kStep);
  e.path = r.text(kPath);
  e.bytes = r.integer(kBytes);
}

}  // namespace halo::protocol
