// Dispatch on the "event" value; a known event's util::Error (or a JSON type error) becomes a
// MalformedEvent, so one bad line never stops a reader.
#include "protocol/Event.h"

#include "util/Error.h"

namespace halo::protocol {

namespace {
Event parse_known(const std::string& name, const nlohmann::json& j) {
  if (name == names::hello) return j.get<HelloEvent>();
  if (name == names::layout) return j.get<LayoutEvent>();
  if (name == names::step) return j.get<StepEvent>();
  if (name == names::eval) return j.get<EvalEvent>();
  if (name == names::checkpoint) return j.get<CheckpointEvent>();
  if (name == names::error) return j.get<ErrorEvent>();
  if (name == names::done) return j.get<DoneEvent>();
  if (name == names::heartbeat) return j.get<HeartbeatEvent>();
  if (name == names::exchange) return j.get<ExchangeEvent>();
  if (name == names::memory_timeline) return j.get<MemoryTimelineEvent>();
  if (name == names::log) return j.get<LogEvent>();
  return UnknownEvent{name, j};
}
}  // namespace

Event parse_event(const nlohmann::json& j) {
  if (!j.is_object()) return LogEvent{j.is_string() ? j.get<std::string>() : j.dump()};
  const auto it = j.find(keys::event);
  const std::string name = it != j.end() && it->is_string() ? it->get<std::string>() : "";
  try {
    return parse_known(name, j);
  } catch (const util::Error& e) {
    return MalformedEvent{name, e.problem(), j};
  } catch (const nlohmann::json::exception& e) {
    return MalformedEvent{name, name + " event: " + e.what(), j};
  }
}

nlohmann::json event_json(const Event& e) {
  return std::visit(
      [](const auto& ev) -> nlohmann::json {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, UnknownEvent> || std::is_same_v<T, MalformedEvent>)
          return ev.json;
        else
          return nlohmann::json(ev);
      },
      e);
}

std::string to_line(const Event& e) { return event_json(e).dump(); }

std::string name_of(const Event& e) {
  return std::visit(
      [](const auto& ev) -> std::string {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, UnknownEvent> || std::is_same_v<T, MalformedEvent>)
          return ev.name;
        else
          return T::name;
      },
      e);
}

}  // namespace halo::protocol
