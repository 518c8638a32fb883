// Simulates the partitions through the layers with the same pure functions the ops use,
// so the check and the run can never disagree.
#include "shard/ShardingCheck.h"

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::shard {

namespace {

// Empty string when fine, else the reason (naming the layer).
std::string first_problem(const std::vector<LayerWindow>& layers, int64_t width, int sp, std::vector<Partition>* out) {
  if (width < sp) return fmt::format("input width {} is smaller than sp={}", width, sp);
  if (width % sp != 0) return fmt::format("input width {} does not split evenly over sp={} ranks", width, sp);
  Partition part = even_partition(width, sp);
  for (const LayerWindow& l : layers) {
    const Window& w = l.window;
    for (int r = 0; r < part.parts(); ++r) {
      const int64_t s = part.span(r).size();
      if (s == 0 || s % w.stride != 0)
        return fmt::format("layer {} (stride {}) gets stripes of width {} ({}), not divisible by its stride", l.name,
                           w.stride, s, part.describe());
    }
    part = output_partition(part, w);
    for (int r = 0; r < part.parts(); ++r)
      if (part.span(r).empty())
        return fmt::format("layer {} leaves rank {} with no output columns ({})", l.name, r, part.describe());
    if (out) out->push_back(part);
  }
  return {};
}

}  // namespace

bool is_shardable(const std::vector<LayerWindow>& layers, int64_t width, int sp) {
  return width > 0 && first_problem(layers, width, sp, nullptr).empty();
}

std::pair<int64_t, int64_t> nearest_shardable(const std::vector<LayerWindow>& layers, int64_t width, int sp) {
  int64_t lo = 0, hi = 0;
  for (int64_t w = width - 1; w > 0 && lo == 0 && width - w <= 1 << 16; --w)
    if (is_shardable(layers, w, sp)) lo = w;
  for (int64_t w = width + 1; hi == 0 && w - width <= 1 << 16; ++w)
    if (is_shardable(layers, w, sp)) hi = w;
  return {lo, hi};
}

std::vector<Partition> check_shardable(const std::vector<LayerWindow>& layers, int64_t width, int sp) {
  std::vector<Partition> parts;
  const std::string why = first_problem(layers, width, sp, &parts);
  if (why.empty()) return parts;
  auto [lo, hi] = nearest_shardable(layers, width, sp);
  std::string hint = "nearest input widths that shard: ";
  if (lo) hint += std::to_string(lo);
  if (lo && hi) hint += " and ";
  if (hi) hint += std::to_string(hi);
  throw util::Error(fmt::format("width {} cannot be sharded over sp={}: {}", width, sp, why), hint);
}

}  // namespace halo::shard
