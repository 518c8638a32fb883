// Checks before any compute that a width can be sharded through a model's layers: every
// stripe must stay divisible by the strides below it. Errors name the layer, the widths
// and the nearest input widths that work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shard/Partition.h"

namespace halo::shard {

struct LayerWindow {
  std::string name;  // "stages.1.downsample.1"
  Window window;     // along W
};

// Partitions of every layer's output for input width W over sp ranks, or util::Error.
std::vector<Partition> check_shardable(const std::vector<LayerWindow>& layers, int64_t width, int sp);

// True when check_shardable would succeed.
bool is_shardable(const std::vector<LayerWindow>& layers, int64_t width, int sp);

// The nearest widths below and above W that pass (0 when none within range).
std::pair<int64_t, int64_t> nearest_shardable(const std::vector<LayerWindow>& layers, int64_t width, int sp);

}  // namespace halo::shard
