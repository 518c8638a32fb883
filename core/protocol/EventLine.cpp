// Tags are two top-level keys beside the event's own, so a tagged line is the worker's line
// with "rank" set and "time" added; the bytes stay those of the JSON object (sorted keys).
#include "protocol/EventLine.h"

#include <type_traits>

namespace halo::protocol {

namespace {
void set_rank(Event& e, int rank) {
  std::visit(
      [rank](auto& ev) {
        if constexpr (requires { ev.rank; }) ev.rank = rank;
      },
      e);
}
}  // namespace

EventLine parse_line(const nlohmann::json& j) {
  EventLine out{parse_event(j), 0, std::nullopt};
  if (!j.is_object()) return out;
  if (const auto r = j.find(keys::rank); r != j.end() && r->is_number_integer()) out.rank = r->get<int>();
  if (const auto t = j.find(keys::time); t != j.end() && t->is_number()) out.time = t->get<double>();
  return out;
}

EventLine parse_line(const std::string& line) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return EventLine{LogEvent{line}, 0, std::nullopt};
  return parse_line(j);
}

void set_rank(EventLine& l, int rank) {
  l.rank = rank;
  set_rank(l.event, rank);
}

EventLine tag_line(const std::string& line, int rank, double time) {
  EventLine out = parse_line(line);
  set_rank(out, rank);
  out.time = time;
  return out;
}

nlohmann::json line_json(const EventLine& l) {
  nlohmann::json j = event_json(l.event);
  j[keys::rank] = l.rank;
  if (l.time) j[keys::time] = *l.time;
  return j;
}

std::string to_line(const EventLine& l) { return line_json(l).dump(); }

}  // namespace halo::protocol
