// `error`: a rank failed (its last line before exiting non-zero); the launcher's failure text
// and the workbench's error list show it.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

struct ErrorEvent {
  static constexpr const char* name = names::error;
  int rank = 0;  // -1 when the worker failed before it knew its rank
  std::string message;
  std::string hint;  // what the user can do; may be empty
  // A collective or halo exchange failed: a consequence of another rank's failure (written
  // only when true, so older lines read the same).
  bool peer_lost = false;
  // "rank R: message" and, when there is a hint, "\n  hint: hint".
  std::string describe(int rank) const;
  bool operator==(const ErrorEvent&) const = default;
};

void to_json(nlohmann::json& j, const ErrorEvent& e);
void from_json(const nlohmann::json& j, ErrorEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
