// A Conv2d module whose forward runs width-sharded: parameters "weight" and "bias" as in
// torch.nn.Conv2d (so checkpoint keys match timm), forward on a ShardedTensor.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "parallel/ShardedConv.h"
#include "parallel/ShardedTensor.h"
#include "shard/ConvSpec.h"

namespace halo::model {

class ShardedConv2dImpl : public torch::nn::Module {
 public:
  ShardedConv2dImpl(int64_t in_channels, int64_t out_channels, shard::ConvSpec spec, bool bias = true);
  parallel::ShardedTensor forward(const parallel::ShardedTensor& x);
  const shard::ConvSpec& spec() const { return spec_; }
  void set_overlap(bool on) { opts_.overlap = on; }
  // The layer's name for parallel::ExchangeClock ("stages.0.blocks.0.conv_dw"); empty: not timed.
  void set_label(std::string label) { opts_.label = std::move(label); }
  const std::string& label() const { return opts_.label; }

  torch::Tensor weight;  // (Cout, Cin/groups, kH, kW)
  torch::Tensor bias;    // (Cout) or undefined

 private:
  shard::ConvSpec spec_;
  parallel::ShardedConvOptions opts_;
};
TORCH_MODULE(ShardedConv2d);

}  // namespace halo::model
