// Bytes are counted from shapes alone (elements x bytes per element), so the rows of a
// planned run and of a running one agree.
#include "train/LayoutRows.h"

#include "shard/HaloPlan.h"

namespace halo::train {

namespace {

int64_t product(const std::array<int64_t, 4>& s) { return s[0] * s[1] * s[2] * s[3]; }

}  // namespace

protocol::LayoutLayer striped_row(const StripedLayer& l, int64_t images, int64_t bytes_per) {
  const shard::Window& w = l.window;
  protocol::LayoutLayer row{l.name, w.kernel, w.stride, w.padding, w.dilation, {}, protocol::LayoutPart::Sharded};
  for (int r = 0; r < l.in.parts(); ++r) {
    const shard::HaloPlan plan = shard::make_halo_plan(l.in, w, r, l.name.c_str());
    const auto [left, right] = plan.peer_columns();
    const std::array<int64_t, 4> shape{images, l.channels, l.height, l.out.span(r).size()};
    row.ranks.push_back({r,
                         {l.in.span(r).begin, l.in.span(r).end},
                         {l.out.span(r).begin, l.out.span(r).end},
                         shape,
                         left,
                         right,
                         product(shape) * bytes_per,
                         (left + right) * l.in_channels * l.in_height * images * bytes_per});
  }
  return row;
}

protocol::LayoutLayer gather_row(std::string name, const shard::Partition& part, int64_t channels, int64_t height,
                                 int64_t images, int64_t bytes_per) {
  protocol::LayoutLayer row{std::move(name), 1, 1, 0, 1, {}, protocol::LayoutPart::Gather};
  const int64_t width = part.global_width();
  const std::array<int64_t, 4> shape{images, channels, height, width};
  for (int r = 0; r < part.parts(); ++r) {
    const int64_t others = width - part.span(r).size();
    row.ranks.push_back({r,
                         {part.span(r).begin, part.span(r).end},
                         {0, width},
                         shape,
                         part.span(r).begin,
                         width - part.span(r).end,
                         product(shape) * bytes_per,
                         others * channels * height * images * bytes_per});
  }
  return row;
}

protocol::LayoutLayer replicated_row(std::string name, std::array<int64_t, 4> shape, int64_t width, int sp,
                                     int64_t bytes_per) {
  protocol::LayoutLayer row{std::move(name), 1, 1, 0, 1, {}, protocol::LayoutPart::Replicated};
  for (int r = 0; r < sp; ++r)
    row.ranks.push_back({r, {0, width}, {0, width}, shape, 0, 0, product(shape) * bytes_per, 0});
  return row;
}

}  // namespace halo::train
