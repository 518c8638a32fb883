// parse_json_strict (declared in config/ExperimentConfig.h): nlohmann's parser with a callback
// that tracks the open objects' keys, so a key given twice is found and named by its path.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "config/ExperimentConfig.h"
#include "util/Error.h"

namespace halo::config {

using nlohmann::json;

json parse_json_strict(const std::string& text, const std::string& what) {
  struct Open {        // an object (its keys so far) or an array being parsed
    std::string step;  // how its parent reaches it: ".key", "[]", or "" at the top
    bool object;
    std::set<std::string> keys;
  };
  std::vector<Open> open;
  std::string key;  // the last key read
  std::optional<std::string> twice;
  auto step = [&]() { return open.empty() ? std::string() : (open.back().object ? "." + key : "[]"); };
  // The dotted path is built only for a duplicate: building it per container would be
  // quadratic in the nesting depth (a hostile file nests 100 000 levels).
  auto path_of_key = [&]() {
    std::string path;
    for (const auto& o : open) path += o.step;
    return (path + "." + key).substr(1);
  };
  const json::parser_callback_t watch = [&](int, json::parse_event_t ev, json& parsed) {
    using E = json::parse_event_t;
    if (ev == E::object_start || ev == E::array_start) open.push_back({step(), ev == E::object_start, {}});
    if (ev == E::object_end || ev == E::array_end) open.pop_back();
    if (ev == E::key && !open.empty()) {
      key = parsed.get<std::string>();
      if (!open.back().keys.insert(key).second && !twice) twice = path_of_key();
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text, watch);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
    std::string why = e.what();         // "[json.exception.parse_error.101] parse error at line L, column C: ..."
    if (auto at = why.find("] "); at != std::string::npos) why = why.substr(at + 2);
    throw util::Error(fmt::format("{} is not valid JSON: {}", what, why),
                      "fix the JSON at that line and column (strings in double quotes, no trailing commas)");
  }
  if (twice) {
    const std::string shown = twice->size() > 80 ? twice->substr(0, 77) + "..." : *twice;
    throw util::Error(fmt::format("{} has the key '{}' twice", what, shown),
                      "keep one of them: JSON readers differ on which copy wins, so Halo refuses both");
  }
  return j;
}

}  // namespace halo::config
