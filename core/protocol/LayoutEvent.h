// `layout`: how the run's activations are sharded, layer by layer and rank by rank (written
// once by rank 0; read by the history and the workbench's layout view and shard overlay).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "protocol/EventNames.h"

namespace halo::protocol {

// One sharding rank's share of a layer: global columns [begin, end) along W.
struct LayoutRank {
  int rank = 0;                           // index in the sharding group (0 .. sp-1)
  std::array<int64_t, 2> in_columns{};    // the layer's input columns this rank owns
  std::array<int64_t, 2> out_columns{};   // the layer's output columns this rank computes
  std::array<int64_t, 4> shape{};         // its output: (B*V, C, H, W/sp)
  int64_t halo_left = 0, halo_right = 0;  // input columns received from the left / right neighbour
  int64_t activation_bytes = 0;           // bytes of that output at the run's compute precision
  // Bytes this rank receives for the layer, once per forward: its halo columns of the input
  // (all its channels and rows); for a gather, the columns of the other ranks.
  int64_t received_bytes = 0;
  bool operator==(const LayoutRank&) const = default;
};

// Where a layer runs: on width stripes (trading halos), the all-gather that ends the striped
// part, or whole on every rank (a detector's view transform and heads).
enum class LayoutPart { Sharded, Gather, Replicated };
const char* name_of(LayoutPart part);  // "sharded", "gather", "replicated"

struct LayoutLayer {
  std::string name;                                           // "stem", "stages.0.blocks.1.conv_dw", ...
  int64_t kernel = 1, stride = 1, padding = 0, dilation = 1;  // the window along W
  std::vector<LayoutRank> ranks;
  LayoutPart part = LayoutPart::Sharded;
  bool operator==(const LayoutLayer&) const = default;
};

struct LayoutEvent {
  static constexpr const char* name = names::layout;
  std::array<int64_t, 4> input{};  // (B*V, 3, H, W): the images of one step on one rank, unsharded
  int sp = 1, dp = 1;
  std::vector<LayoutLayer> layers;
  bool operator==(const LayoutEvent&) const = default;
};

// The picture of camera view `view` as sharding rank `rank` holds it (its stripe of the first
// step's input), relative to the run folder: "preview/view-<view>-rank-<rank>.png". Written
// by the workers of data-parallel group 0 after their first step; read by the layout view.
std::string preview_file(int view, int rank);

void to_json(nlohmann::json& j, const LayoutEvent& e);
void from_json(const nlohmann::json& j, LayoutEvent& e);  // util::Error when malformed

}  // namespace halo::protocol
