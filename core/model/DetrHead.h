// A DETR decoder head (the baseline's CustomDETRHead): learned queries attend to a feature
// map; a classification branch and a sigmoid regression branch read the decoded queries.
#pragma once

#include <tuple>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/transformercoder.h>
#include <torch/nn/pimpl.h>

namespace halo::model {

// DETR's sine positional encoding of a (h, w) map: (dim, h, w), half the channels for y.
at::Tensor sine_position_embedding(int64_t h, int64_t w, int64_t dim, const at::TensorOptions& options);

struct DetrHeadOptions {
  int64_t dim = 128, queries = 50, classes = 1, reg_dim = 15;
  int64_t heads = 8, ffn = 512, layers = 1;
};

class DetrHeadImpl : public torch::nn::Module {
 public:
  explicit DetrHeadImpl(const DetrHeadOptions& o);
  // memory (B, D, h, w) -> logits (B, Q, classes), regression in [0, 1] (B, Q, reg_dim),
  // decoded query features (B, Q, D) for the topology heads.
  std::tuple<at::Tensor, at::Tensor, at::Tensor> forward(const at::Tensor& memory);

  torch::nn::Embedding query_embedding{nullptr};
  torch::nn::TransformerDecoder decoder{nullptr};
  torch::nn::Linear cls_branch{nullptr};
  torch::nn::Sequential reg_branch{nullptr};

 private:
  DetrHeadOptions o_;
};
TORCH_MODULE(DetrHead);

}  // namespace halo::model
