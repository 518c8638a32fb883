// Per-rank shapes of every layer that reads across W, for an (H, W) input over sp ranks:
// output height, each rank's input and output columns, and its halo from the exchange plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/LayerList.h"
#include "shard/HaloPlan.h"
#include "shard/Partition.h"

namespace halo::arch {

struct RankShape {
  shard::Span in, out;                    // input columns it holds, output columns it computes
  int64_t halo_left = 0, halo_right = 0;  // columns received from lower / higher ranks (padding excluded)
  shard::HaloPlan plan;                   // the whole exchange (needed columns, pieces, sends)
};

struct LayerShape {
  size_t layer = 0;      // index in the layer list
  std::string name;      // the across-W conv: "stem.0", "stages.1.downsample.1", "stages.0.blocks.0.conv_dw"
  shard::Window window;  // along W
  int64_t channels = 0;  // output channels of the layer
  int64_t in_height = 0, height = 0;
  shard::Partition in, out;      // columns over the ranks before and after the layer
  std::vector<RankShape> ranks;  // one per rank
};

// One entry per layer with an across-W conv, in order (a pooled head has none). Throws
// util::Error when the width cannot shard over sp (shard::check_shardable's message, with
// the nearest widths that do) or the height is too small for a layer's window.
std::vector<LayerShape> layer_shapes(const LayerList& layers, int64_t height, int64_t width, int sp);

}  // namespace halo::arch
