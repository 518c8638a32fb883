// Nearest-neighbour upsampling by 2 is local to a stripe when the stripes line up (rank r's
// stride-16 span is 2x its stride-32 span), so only the 3x3 conv exchanges halos.
#include "model/Fpn.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "model/ShardedConv2d.h"
#include "util/Error.h"

namespace halo::model {

FpnImpl::FpnImpl(int64_t in16, int64_t in32, int64_t out_channels) {
  lateral_convs = register_module("lateral_convs", torch::nn::ModuleList());
  lateral_convs->push_back(ShardedConv2d(in16, out_channels, shard::ConvSpec::square(1)));
  lateral_convs->push_back(ShardedConv2d(in32, out_channels, shard::ConvSpec::square(1)));
  fpn_convs = register_module("fpn_convs", torch::nn::ModuleList());
  fpn_convs->push_back(ShardedConv2d(out_channels, out_channels, shard::ConvSpec::square(3, 1, 1)));
}

parallel::ShardedTensor FpnImpl::forward(const parallel::ShardedTensor& s16, const parallel::ShardedTensor& s32) {
  const shard::Span a = s16.part.span(s16.rank()), b = s32.part.span(s32.rank());
  if (a.begin != 2 * b.begin || a.end != 2 * b.end || s16.local.size(2) != 2 * s32.local.size(2))
    throw util::Error(fmt::format("FPN: rank {} holds stride-16 columns [{}, {}) but stride-32 columns [{}, {})",
                                  s16.rank(), a.begin, a.end, b.begin, b.end),
                      "use an image width and height that are multiples of 32 x sp");
  parallel::ShardedTensor lat16 = lateral_convs->at<ShardedConv2dImpl>(0).forward(s16);  // (B, D, H/16, W/16/world)
  parallel::ShardedTensor lat32 = lateral_convs->at<ShardedConv2dImpl>(1).forward(s32);  // (B, D, H/32, W/32/world)
  at::Tensor up =
      torch::upsample_nearest2d(lat32.local, std::vector<int64_t>{lat16.local.size(2), lat16.local.size(3)});
  return fpn_convs->at<ShardedConv2dImpl>(0).forward(lat16.with(lat16.local + up));
}

}  // namespace halo::model
