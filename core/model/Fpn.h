// The baseline's CustomFPN (num_outs 1, out_ids [0]) on width-sharded maps: 1x1 laterals on
// the stride-16 and stride-32 stages, nearest top-down upsampling, a 3x3 conv at stride 16.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include "parallel/ShardedTensor.h"

namespace halo::model {

class FpnImpl : public torch::nn::Module {
 public:
  FpnImpl(int64_t in16, int64_t in32, int64_t out_channels);
  // s16 (B, C16, H/16, W/16/world), s32 (B, C32, H/32, W/32/world) -> (B, D, H/16, W/16/world).
  // Each rank's stride-16 columns must be twice its stride-32 columns (util::Error if not).
  parallel::ShardedTensor forward(const parallel::ShardedTensor& s16, const parallel::ShardedTensor& s32);

  torch::nn::ModuleList lateral_convs{nullptr};  // ShardedConv2d 1x1: 0 on stride 16, 1 on stride 32
  torch::nn::ModuleList fpn_convs{nullptr};      // ShardedConv2d 3x3 pad 1 on stride 16
};
TORCH_MODULE(Fpn);

}  // namespace halo::model
