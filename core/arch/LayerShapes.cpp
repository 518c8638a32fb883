// The partitions come from shard::check_shardable, the halos from shard::make_halo_plan:
// the same pure functions the sharded ops run, so the shapes and the run cannot disagree.
#include "arch/LayerShapes.h"

#include <fmt/format.h>

#include "shard/ShardingCheck.h"
#include "util/Error.h"

namespace halo::arch {

namespace {

int64_t output_height(const PathOp& op, int64_t h) {
  const shard::Window w = op.spec.along_h();
  if (h + 2 * w.padding < w.reach())
    throw util::Error(fmt::format("input height {} is too small for layer {} (kernel {}, padding {})", h, op.name,
                                  w.kernel, w.padding),
                      "use a larger data.height");
  return shard::output_width(h, w);
}

std::vector<RankShape> rank_shapes(const LayerShape& s, int sp) {
  std::vector<RankShape> out;
  for (int r = 0; r < sp; ++r) {
    RankShape rs{s.in.span(r), s.out.span(r), 0, 0, shard::make_halo_plan(s.in, s.window, r, s.name.c_str())};
    const auto [left, right] = rs.plan.peer_columns();
    rs.halo_left = left;
    rs.halo_right = right;
    out.push_back(std::move(rs));
  }
  return out;
}

}  // namespace

std::vector<LayerShape> layer_shapes(const LayerList& layers, int64_t height, int64_t width, int sp) {
  const std::vector<shard::LayerWindow> windows = layers.windows();
  const std::vector<shard::Partition> parts = shard::check_shardable(windows, width, sp);
  std::vector<LayerShape> out;
  shard::Partition part = shard::even_partition(width, sp);
  int64_t h = height;
  for (size_t i = 0, k = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    if (l.path.empty()) continue;
    // The layer as one step: its first op's window and halo, its last op's stripes.
    LayerShape s{i, windows[k].name, windows[k].window, l.out_channels, h, h, part, parts[k + l.path.size() - 1], {}};
    for (const PathOp& op : l.path) s.height = output_height(op, s.height);
    s.ranks = rank_shapes(s, sp);
    h = s.height;
    k += l.path.size();
    part = s.out;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace halo::arch
