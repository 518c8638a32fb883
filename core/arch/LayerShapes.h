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
  std::string name;      // its first across-W op: "stem.0", "stages.0.blocks.0.conv_dw", "conv1", "layer2.0.conv1"
  shard::Window window;  // that op's, along W (the halo shown; ranks[].plan is that op's exchange)
  int64_t channels = 0;  // output channels of the layer
  int64_t in_height = 0, height = 0;
  shard::Partition in, out;      // columns over the ranks before and after the layer
  std::vector<RankShape> ranks;  // one per rank
};

// One entry per layer with an across-W op, in order (a pooled head has none); a layer of
// several (a ResNet block) is one entry, from its input stripes to its output stripes. Throws
// util::Error when the width cannot shard over sp (shard::check_shardable's message, with
// the nearest widths that do) or the height is too small for a layer's window.
std::vector<LayerShape> layer_shapes(const LayerList& layers, int64_t height, int64_t width, int sp);

}  // namespace halo::arch
