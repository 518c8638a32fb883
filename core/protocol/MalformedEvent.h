// A line that names a known event but whose fields do not fit it (a missing required field,
// a string where a number belongs): kept whole, with the reason, and never typed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace halo::protocol {

struct MalformedEvent {
  std::string name;     // the event it claims to be ("step")
  std::string problem;  // e.g. "step event: field 'memory.peak' is string ("x"), expected an integer"
  nlohmann::json json;  // the object as written
  bool operator==(const MalformedEvent&) const = default;
};

}  // namespace halo::protocol
