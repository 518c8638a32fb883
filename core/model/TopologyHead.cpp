// Pair features are the concatenation [o1_i, o2_j]; three-layer MLPs as the baseline config
// (hidden 128, num_layers 3).
#include "model/TopologyHead.h"

#include <torch/torch.h>

#include "model/Mlp.h"

namespace halo::model {

TopologyHeadImpl::TopologyHeadImpl(int64_t in_channels, int64_t hidden, int64_t layers) {
  mlp_o1 = register_module("mlp_o1", make_mlp(in_channels, hidden, hidden, layers));
  mlp_o2 = register_module("mlp_o2", make_mlp(in_channels, hidden, hidden, layers));
  classifier = register_module("classifier", make_mlp(2 * hidden, hidden, 1, layers));
}

at::Tensor TopologyHeadImpl::forward(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor ea = mlp_o1->forward(a), eb = mlp_o2->forward(b);  // (B, N, H), (B, M, H)
  const int64_t N = ea.size(1), M = eb.size(1);
  at::Tensor pairs = torch::cat({ea.unsqueeze(2).expand({-1, N, M, -1}), eb.unsqueeze(1).expand({-1, N, M, -1})}, -1);
  return classifier->forward(pairs).squeeze(-1);  // (B, N, M)
}

}  // namespace halo::model
