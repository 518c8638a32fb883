// One line of <run>/events.jsonl: a rank's event plus what the launcher adds to it, the rank
// whose stdout held it ("rank", overwriting the worker's own) and when it arrived ("time").
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/Event.h"

namespace halo::protocol {

struct EventLine {
  Event event;
  int rank = 0;                // the global rank it came from
  std::optional<double> time;  // Unix seconds on arrival; none on an untagged (worker's own) line
};

// The launcher's reading of a rank's stdout line: `rank` becomes the event's rank too.
EventLine tag_line(const std::string& line, int rank, double time);
void set_rank(EventLine& l, int rank);  // the line's rank and its event's
// A line of events.jsonl (or any rank's stdout line): not JSON -> a LogEvent of the text.
EventLine parse_line(const std::string& line);
EventLine parse_line(const nlohmann::json& j);
nlohmann::json line_json(const EventLine& l);  // the event's object with "rank" and (when known) "time"
std::string to_line(const EventLine& l);       // line_json(l).dump(): one line of events.jsonl

}  // namespace halo::protocol
