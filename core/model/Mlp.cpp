// Builds the Sequential; LibTorch's default Linear initialisation (as torch.nn.Linear).
#include "model/Mlp.h"

#include <torch/torch.h>

namespace halo::model {

torch::nn::Sequential make_mlp(int64_t in, int64_t hidden, int64_t out, int64_t layers) {
  torch::nn::Sequential seq;
  for (int64_t i = 0; i < layers; ++i) {
    const bool last = i + 1 == layers;
    seq->push_back(torch::nn::Linear(i == 0 ? in : hidden, last ? out : hidden));
    if (!last) seq->push_back(torch::nn::ReLU());
  }
  return seq;
}

}  // namespace halo::model
