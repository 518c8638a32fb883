// Weight initialisation as timm does it (trunc_normal_ with cut-offs at +-2).
// Draws from LibTorch's default generator, so a seed makes it repeatable.
#pragma once

#include <ATen/core/Tensor.h>

namespace halo::model {

void trunc_normal_(at::Tensor& t, double std, double lo = -2.0, double hi = 2.0);

}  // namespace halo::model
