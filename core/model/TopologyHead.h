// The baseline's TopologyHead: an MLP embeds each side's query features, a classifier MLP
// scores every (i, j) pair. Returns logits; the loss applies the sigmoid (once).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

namespace halo::model {

class TopologyHeadImpl : public torch::nn::Module {
 public:
  TopologyHeadImpl(int64_t in_channels, int64_t hidden, int64_t layers);
  // a (B, N, D), b (B, M, D) -> pair logits (B, N, M)
  at::Tensor forward(const at::Tensor& a, const at::Tensor& b);

  torch::nn::Sequential mlp_o1{nullptr}, mlp_o2{nullptr}, classifier{nullptr};
};
TORCH_MODULE(TopologyHead);

}  // namespace halo::model
