// Halo plans: from partitions to per-peer transfers. A rank's halo can reach past its
// neighbour into ranks beyond it; every piece comes from the rank that owns it.
#include "shard/HaloPlan.h"

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::shard {

bool HaloPlan::is_local() const {
  for (const Piece& p : pieces)
    if (p.source != Piece::Source::Local) return false;
  return true;
}

std::optional<int64_t> plain_padding(const HaloPlan& plan, const Window& w) {
  if (!plan.sends.empty()) return std::nullopt;
  for (const Piece& p : plan.pieces)
    if (p.source == Piece::Source::Peer) return std::nullopt;
  const int64_t pad = plan.halo_left();  // conv2d pads both sides alike
  if (pad < 0 || pad != (plan.owned.begin == 0 ? w.padding : 0)) return std::nullopt;
  if (plan.outputs.begin * w.stride - w.padding != plan.needed.begin) return std::nullopt;
  const int64_t span = plan.owned.size() + 2 * pad - w.reach();
  if (span < 0 || span / w.stride + 1 != plan.outputs.size()) return std::nullopt;
  return pad;
}

std::pair<int64_t, int64_t> HaloPlan::peer_columns() const {
  std::pair<int64_t, int64_t> cols{0, 0};
  for (const Piece& p : pieces)
    if (p.source == Piece::Source::Peer) (p.peer < rank ? cols.first : cols.second) += p.columns.size();
  return cols;
}

HaloPlan make_halo_plan(const Partition& in, const std::vector<Span>& needed_by_rank, int rank) {
  HaloPlan plan;
  plan.rank = rank;
  plan.owned = in.span(rank);
  plan.needed = needed_by_rank.at(static_cast<size_t>(rank));
  const int64_t W = in.global_width();
  const Span needed = plan.needed;
  if (needed.begin < 0)
    plan.pieces.push_back({Piece::Source::Pad, -1, {needed.begin, std::min<int64_t>(0, needed.end)}});
  for (int q = 0; q < in.parts(); ++q) {
    const Span part = intersect(in.span(q), needed);
    if (part.empty()) continue;
    plan.pieces.push_back({q == rank ? Piece::Source::Local : Piece::Source::Peer, q, part});
  }
  if (needed.end > W) plan.pieces.push_back({Piece::Source::Pad, -1, {std::max<int64_t>(W, needed.begin), needed.end}});
  for (int q = 0; q < in.parts(); ++q) {
    if (q == rank) continue;
    const Span part = intersect(plan.owned, needed_by_rank.at(static_cast<size_t>(q)));
    if (!part.empty()) plan.sends.push_back({q, part});
  }
  return plan;
}

HaloPlan make_halo_plan(const Partition& in, const Window& w, int rank, const char* layer) {
  const Partition out = output_partition(in, w);
  std::vector<Span> needed;
  for (int q = 0; q < in.parts(); ++q) {
    if (in.span(q).empty() || out.span(q).empty())
      throw util::Error(
          fmt::format("layer {}: rank {} of {} would hold {} input and {} output columns (input width {}, "
                      "stripes {}; kernel {}, stride {}, padding {}, dilation {})",
                      *layer ? layer : "?", q, in.parts(), in.span(q).size(), out.span(q).size(), in.global_width(),
                      in.describe(), w.kernel, w.stride, w.padding, w.dilation),
          "use fewer sp ranks or a wider input so that every rank keeps at least one column");
    needed.push_back(input_needed(out.span(q), w));
  }
  HaloPlan plan = make_halo_plan(in, needed, rank);
  plan.outputs = out.span(rank);
  return plan;
}

}  // namespace halo::shard
