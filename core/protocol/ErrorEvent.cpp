// The error event's keys and their JSON, and the text the launcher and the workbench show.
#include "protocol/ErrorEvent.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

namespace {
constexpr char kMessage[] = "message", kHint[] = "hint", kPeerLost[] = "peer_lost";
}

std::string ErrorEvent::describe(int at_rank) const {
  return fmt::format("rank {}: {}{}", at_rank, message, hint.empty() ? "" : "\n  hint: " + hint);
}

void to_json(nlohmann::json& j, const ErrorEvent& e) {
  j = {{keys::event, ErrorEvent::name}, {keys::rank, e.rank}, {kMessage, e.message}, {kHint, e.hint}};
  if (e.peer_lost) j[kPeerLost] = true;
}

void from_json(const nlohmann::json& j, ErrorEvent& e) {
  const FieldReader r = FieldReader::event(j, ErrorEvent::name);
  e.rank = static_cast<int>(r.integer(keys::rank));
  e.message = r.text(kMessage);
  e.hint = r.text(kHint);
  e.peer_lost = r.boolean(kPeerLost);
}

}  // namespace halo::protocol
