// Pooling over halo-extended stripes: the global edges are padded with the op's own
// padding value, inner edges with the neighbours' real columns. A rank that exchanges nothing
// (world size 1) runs LibTorch's pooling with its own padding: no padded copy is kept.
#include "parallel/ShardedPool.h"

#include <limits>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "parallel/Collectives.h"
#include "parallel/HaloExchange.h"
#include "util/Error.h"

namespace halo::parallel {

ShardedTensor sharded_max_pool2d(const ShardedTensor& x, const shard::ConvSpec& s) {
  const shard::Window win = s.along_w();
  shard::HaloPlan plan = shard::make_halo_plan(x.part, win, x.rank(), "max_pool2d");
  if (const auto pad = shard::plain_padding(plan, win))  // nothing to exchange: plain LibTorch, no padded copy
    return {at::max_pool2d(x.local, {s.kernel[0], s.kernel[1]}, {s.stride[0], s.stride[1]}, {s.padding[0], *pad},
                           {s.dilation[0], s.dilation[1]}),
            shard::output_partition(x.part, win), x.group};
  at::Tensor ext = halo_extend(x.local, plan, x.group, -std::numeric_limits<double>::infinity());
  at::Tensor y = at::max_pool2d(ext, {s.kernel[0], s.kernel[1]}, {s.stride[0], s.stride[1]}, {s.padding[0], 0},
                                {s.dilation[0], s.dilation[1]});
  return {y, shard::output_partition(x.part, win), x.group};
}

ShardedTensor sharded_avg_pool2d(const ShardedTensor& x, const shard::ConvSpec& s, bool count_include_pad) {
  if (s.dilation[0] != 1 || s.dilation[1] != 1)
    throw util::Error(fmt::format("avg_pool2d has no dilation (got {}x{})", s.dilation[0], s.dilation[1]));
  const shard::Window win = s.along_w();
  shard::HaloPlan plan = shard::make_halo_plan(x.part, win, x.rank(), "avg_pool2d");
  if (const auto pad = shard::plain_padding(plan, win))
    return {at::avg_pool2d(x.local, {s.kernel[0], s.kernel[1]}, {s.stride[0], s.stride[1]}, {s.padding[0], *pad}, false,
                           count_include_pad),
            shard::output_partition(x.part, win), x.group};
  at::Tensor ext = halo_extend(x.local, plan, x.group, 0.0);
  auto pool = [&](const at::Tensor& t) {
    return at::avg_pool2d(t, {s.kernel[0], s.kernel[1]}, {s.stride[0], s.stride[1]}, {s.padding[0], 0}, false, true);
  };
  at::Tensor y = pool(ext);
  if (!count_include_pad) {
    // Divide by the real (non-padding) count: pool a mask that is 0 on padding columns.
    at::Tensor mask = at::zeros({1, 1, ext.size(2), ext.size(3)}, ext.options());
    for (const shard::Piece& p : plan.pieces)
      if (p.source != shard::Piece::Source::Pad)
        mask.narrow(-1, plan.offset(p.columns.begin), p.columns.size()).fill_(1.0);
    y = y / pool(mask);  // H padding counts as 0 in the mask too
  }
  return {y, shard::output_partition(x.part, win), x.group};
}

at::Tensor global_avg_pool(const ShardedTensor& x) {
  at::Tensor local = x.local.sum({2, 3});  // (B, C), partial over W
  return sum_to_replicated(local, x.group) / static_cast<double>(x.local.size(2) * x.global_width());
}

}  // namespace halo::parallel
