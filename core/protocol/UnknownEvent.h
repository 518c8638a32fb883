// A JSON object line that is no event of the protocol (another name, or none): kept whole,
// so nothing a rank prints is lost (events.jsonl and the history's events keep it as is).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace halo::protocol {

struct UnknownEvent {
  std::string name;     // its "event" value; empty when it has none (the history files it as "log")
  nlohmann::json json;  // the object as written
  bool operator==(const UnknownEvent&) const = default;
};

}  // namespace halo::protocol
