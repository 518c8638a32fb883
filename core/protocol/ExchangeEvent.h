// `exchange`: how long one rank waited for each layer's halo exchange, measured over a few
// early steps; once per rank of data-parallel group 0. Read by the workbench's layout view.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

struct ExchangeEvent {
  static constexpr const char* name = names::exchange;
  int rank = 0;
  int64_t steps = 0;  // the steps measured (after the first, which warms up)
  // Per layer (the layout event's names): milliseconds per step this rank spent starting and
  // waiting for the layer's halo exchange, forward and backward (what the overlap left exposed).
  std::map<std::string, double> ms;
  bool operator==(const ExchangeEvent&) const = default;
};

void to_json(nlohmann::json& j, const ExchangeEvent& e);
void from_json(const nlohmann::json& j, ExchangeEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
