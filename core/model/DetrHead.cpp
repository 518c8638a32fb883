// Decoder layers without dropout (deterministic: sharded and single-process runs agree); the
// positional encoding is added to the memory; the class bias starts at prior 0.01 as mmdet's.
#include "model/DetrHead.h"

#include <cmath>

#include <torch/torch.h>

#include "model/Mlp.h"

namespace halo::model {

at::Tensor sine_position_embedding(int64_t h, int64_t w, int64_t dim, const at::TensorOptions& options) {
  const int64_t half = dim / 2;
  const double two_pi = 2 * M_PI, eps = 1e-6;
  auto o64 = options.dtype(torch::kFloat64);
  at::Tensor y = (torch::arange(1, h + 1, o64) / (h + eps) * two_pi).view({h, 1});  // normalised cumsum, as DETR
  at::Tensor x = (torch::arange(1, w + 1, o64) / (w + eps) * two_pi).view({1, w});
  at::Tensor i = torch::arange(half, o64);
  at::Tensor freq = torch::pow(10000.0, 2 * torch::floor(i / 2) / half).view({half, 1, 1});
  auto encode = [&](const at::Tensor& p) {  // (half, h or 1, w or 1): sin on even, cos on odd channels
    at::Tensor v = p.unsqueeze(0) / freq;
    at::Tensor even = (torch::arange(half, o64) % 2 == 0).view({half, 1, 1});
    return torch::where(even, v.sin(), v.cos());
  };
  at::Tensor py = encode(y).expand({half, h, w}), px = encode(x).expand({half, h, w});
  at::Tensor pos = torch::cat({py, px}, 0);  // (2*half, h, w)
  if (pos.size(0) < dim) pos = torch::cat({pos, torch::zeros({dim - pos.size(0), h, w}, o64)}, 0);
  return pos.to(options.dtype());
}

DetrHeadImpl::DetrHeadImpl(const DetrHeadOptions& o) : o_(o) {
  query_embedding = register_module("query_embedding", torch::nn::Embedding(o.queries, o.dim));
  auto layer = torch::nn::TransformerDecoderLayer(
      torch::nn::TransformerDecoderLayerOptions(o.dim, o.heads).dim_feedforward(o.ffn).dropout(0.0));
  decoder =
      register_module("decoder", torch::nn::TransformerDecoder(torch::nn::TransformerDecoderOptions(layer, o.layers)));
  cls_branch = register_module("cls_branch", torch::nn::Linear(o.dim, o.classes));
  reg_branch = register_module("reg_branch", make_mlp(o.dim, o.dim, o.reg_dim, 3));
  torch::NoGradGuard no_grad;
  cls_branch->bias.fill_(-std::log((1 - 0.01) / 0.01));  // mmdet bias_init_with_prob(0.01)
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> DetrHeadImpl::forward(const at::Tensor& memory) {
  const int64_t B = memory.size(0), D = memory.size(1), h = memory.size(2), w = memory.size(3);
  at::Tensor pos = sine_position_embedding(h, w, D, memory.options());               // (D, h, w)
  at::Tensor mem = (memory + pos.unsqueeze(0)).flatten(2).permute({2, 0, 1});        // (h*w, B, D)
  at::Tensor tgt = query_embedding->weight.unsqueeze(1).expand({o_.queries, B, D});  // (Q, B, D)
  at::Tensor decoded = decoder->forward(tgt, mem).transpose(0, 1);                   // (B, Q, D)
  return {cls_branch->forward(decoded), torch::sigmoid(reg_branch->forward(decoded)), decoded};
}

}  // namespace halo::model
