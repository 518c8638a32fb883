// Which columns each rank sends to and receives from every other rank so that it holds
// all input columns its outputs need: pure maths from the input and output partitions.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "shard/Partition.h"

namespace halo::shard {

// One contiguous piece of the extended input, in global column order.
struct Piece {
  enum class Source { Pad, Local, Peer };
  Source source = Source::Pad;
  int peer = -1;  // owning rank when source == Peer
  Span columns;   // global columns (may lie outside [0, W) for Pad)
};

// A block of columns one rank sends to another.
struct Transfer {
  int peer = -1;
  Span columns;  // global columns, owned by the sender
};

struct HaloPlan {
  int rank = 0;
  Span owned;                   // input columns this rank holds
  Span needed;                  // input columns its outputs read (global, may exceed [0, W))
  Span outputs;                 // output columns this rank computes
  std::vector<Piece> pieces;    // needed, as pad / local / peer pieces in column order
  std::vector<Transfer> sends;  // my columns others need, ascending peer
  int64_t halo_left() const { return owned.begin - needed.begin; }  // may be negative
  int64_t halo_right() const { return needed.end - owned.end; }
  bool is_local() const;  // needs nothing from peers and no padding columns (may still send)
  // Halo columns received from lower ranks (first) and higher ranks (second); padding excluded.
  std::pair<int64_t, int64_t> peer_columns() const;
  // Columns of the extended input at [needed.begin + off, ...) for a global column.
  int64_t offset(int64_t global_column) const { return global_column - needed.begin; }
};

// Plan for `rank` given the input partition and the window. Throws util::Error (naming
// `layer`) when some rank would own no input or compute no output columns.
HaloPlan make_halo_plan(const Partition& in, const Window& w, int rank, const char* layer = "");

// The padding along W with which a plain conv2d of this rank's own columns computes exactly
// the plan's outputs: when the rank exchanges nothing (world size 1, or a patchify conv whose
// stripes line up) and pads only at the image's edges. nullopt when a halo exchange is needed.
std::optional<int64_t> plain_padding(const HaloPlan& plan, const Window& w);

// Plan where each rank's needed columns are given directly (same rules, no window).
HaloPlan make_halo_plan(const Partition& in, const std::vector<Span>& needed_by_rank, int rank);

}  // namespace halo::shard
