// `log`: the launcher's pseudo-event for a rank's stdout line that is not a JSON object (the
// workbench appends it to the rank's log).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

struct LogEvent {
  static constexpr const char* name = names::log;
  std::string text;  // the line as the rank wrote it, without its newline
  bool operator==(const LogEvent&) const = default;
};

void to_json(nlohmann::json& j, const LogEvent& e);
void from_json(const nlohmann::json& j, LogEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
