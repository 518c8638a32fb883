// `hello`: a rank has joined the mesh (written once by every worker, read by the history for
// the run's devices and by the workbench's rank list).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

struct HelloEvent {
  static constexpr const char* name = names::hello;
  int rank = 0;
  int world = 0;       // ranks in the run
  int64_t pid = 0;     // the worker's process id
  std::string device;  // "cpu", "cuda:0"
  std::string host;    // the worker's host name
  int sp_index = 0;    // position in its sharding group
  int dp_index = 0;    // index of its data-parallel group
  bool operator==(const HelloEvent&) const = default;
};

void to_json(nlohmann::json& j, const HelloEvent& e);
void from_json(const nlohmann::json& j, HelloEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
