// The layout event's rows as pure functions of partitions and shapes: a layer on width
// stripes (halos from shard::make_halo_plan), the gather that ends them, a replicated layer.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "protocol/LayoutEvent.h"
#include "shard/Partition.h"

namespace halo::train {

struct StripedLayer {
  std::string name;                        // the module: "stages.0.blocks.0.conv_dw", "img_neck.fpn_convs.0"
  shard::Window window;                    // along W
  shard::Partition in, out;                // columns of its input and output over the ranks
  int64_t in_channels = 0, in_height = 0;  // of its input (what a halo column holds)
  int64_t channels = 0, height = 0;        // of its output
};

// One rank entry per stripe: its columns, output shape (images, C, H, W/sp), halos, output
// bytes and the bytes its halo columns bring in (all input channels and rows).
protocol::LayoutLayer striped_row(const StripedLayer& l, int64_t images, int64_t bytes_per);

// The all-gather of a (images, channels, height, W) map striped on `part`: every rank ends
// with all of it and receives the other ranks' columns.
protocol::LayoutLayer gather_row(std::string name, const shard::Partition& part, int64_t channels, int64_t height,
                                 int64_t images, int64_t bytes_per);

// A layer computed whole on each of `sp` ranks: output `shape` on each, nothing received.
protocol::LayoutLayer replicated_row(std::string name, std::array<int64_t, 4> shape, int64_t width, int sp,
                                     int64_t bytes_per);

}  // namespace halo::train
