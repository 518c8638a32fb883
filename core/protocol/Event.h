// Any line of a rank's stdout, as the protocol reads it: one of the typed events, the log
// pseudo-event (not JSON), an unknown JSON object, or a malformed known event.
#pragma once

#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "protocol/CheckpointEvent.h"
#include "protocol/DoneEvent.h"
#include "protocol/ErrorEvent.h"
#include "protocol/EvalEvent.h"
#include "protocol/ExchangeEvent.h"
#include "protocol/HeartbeatEvent.h"
#include "protocol/HelloEvent.h"
#include "protocol/LayoutEvent.h"
#include "protocol/LogEvent.h"
#include "protocol/MalformedEvent.h"
#include "protocol/MemoryTimelineEvent.h"
#include "protocol/StepEvent.h"
#include "protocol/UnknownEvent.h"

namespace halo::protocol {

using Event = std::variant<HelloEvent, LayoutEvent, StepEvent, EvalEvent, CheckpointEvent, ErrorEvent, DoneEvent,
                           HeartbeatEvent, ExchangeEvent, MemoryTimelineEvent, LogEvent, UnknownEvent, MalformedEvent>;

// Never throws: a value that is not an object is a LogEvent of its text; an object naming a
// known event that does not fit it is a MalformedEvent saying why; any other object is an UnknownEvent.
Event parse_event(const nlohmann::json& j);
nlohmann::json event_json(const Event& e);  // the worker's object (unknown and malformed ones as they came)
std::string to_line(const Event& e);        // one line of a worker's stdout, without the newline
std::string name_of(const Event& e);        // its "event" value ("" for an unknown object without one)

}  // namespace halo::protocol
