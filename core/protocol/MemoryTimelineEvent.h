// `memory_timeline`: one rank's live bytes through one training step, measured at every layer
// boundary of forward and backward (then the gradient sync and the optimizer); once per rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

// One moment of the step: "forward of stages.0.blocks.2" (the layer just ran), "backward of
// stem", "gradient sync", "optimizer step". Bytes are the process's live tensor bytes.
struct TimelinePoint {
  std::string where;
  int64_t high = 0;   // the most live since the previous point (CUDA: equals after)
  int64_t after = 0;  // live once it is done
  bool operator==(const TimelinePoint&) const = default;
};

struct MemoryTimelineEvent {
  static constexpr const char* name = names::memory_timeline;
  int rank = 0;
  int64_t step = 0;    // the step measured (0-based)
  int64_t start = 0;   // live bytes when the step began (weights, gradients, optimizer state)
  std::string device;  // "cpu" (the counting allocator) or "cuda" (the caching allocator's allocated bytes)
  std::vector<TimelinePoint> points;  // in the order they happened
  bool operator==(const MemoryTimelineEvent&) const = default;
};

void to_json(nlohmann::json& j, const MemoryTimelineEvent& e);
void from_json(const nlohmann::json& j, MemoryTimelineEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
