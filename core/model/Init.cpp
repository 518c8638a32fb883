// Truncated normal by inverse CDF, as torch.nn.init.trunc_normal_ computes it.
// Done under no-grad, in place.
#include "model/Init.h"

#include <cmath>

#include <torch/torch.h>

namespace halo::model {

void trunc_normal_(at::Tensor& t, double std, double lo, double hi) {
  torch::NoGradGuard no_grad;
  auto cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double l = cdf(lo / std), u = cdf(hi / std);  // mean 0
  t.uniform_(2 * l - 1, 2 * u - 1);
  t.erfinv_();
  t.mul_(std * std::sqrt(2.0));
  t.clamp_(lo, hi);
}

}  // namespace halo::model
