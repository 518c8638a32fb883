// The small multi-layer perceptrons of the DETR heads' regression branches and the topology
// heads: Linear (+ ReLU) x layers, named 0, 2, 4, ... as torch.nn.Sequential names them.
#pragma once

#include <torch/nn/modules/container/sequential.h>

namespace halo::model {

// layers Linear layers: in -> hidden -> ... -> hidden -> out, ReLU between them.
torch::nn::Sequential make_mlp(int64_t in, int64_t hidden, int64_t out, int64_t layers);

}  // namespace halo::model
