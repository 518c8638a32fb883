// Conv2d parameters initialised as timm initialises ConvNeXt (truncated normal, std 0.02,
// zero bias); forward delegates to parallel::sharded_conv2d.
#include "model/ShardedConv2d.h"

#include <torch/torch.h>

#include "model/Init.h"

namespace halo::model {

ShardedConv2dImpl::ShardedConv2dImpl(int64_t in_channels, int64_t out_channels, shard::ConvSpec spec, bool with_bias)
    : spec_(spec) {
  weight = register_parameter("weight",
                              torch::empty({out_channels, in_channels / spec.groups, spec.kernel[0], spec.kernel[1]}));
  trunc_normal_(weight, 0.02);
  if (with_bias) bias = register_parameter("bias", torch::zeros({out_channels}));
}

parallel::ShardedTensor ShardedConv2dImpl::forward(const parallel::ShardedTensor& x) {
  return parallel::sharded_conv2d(x, weight, bias, spec_, opts_);
}

}  // namespace halo::model
