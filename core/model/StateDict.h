// A module's tensors as PyTorch's state_dict() lists them: what export writes and what timm's
// strict load compares key by key.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

namespace halo::model {

// Module by module (pre-order), each module's parameters, then its buffers (BatchNorm's
// running statistics), under their dotted names; the tensors are the module's own.
std::vector<std::pair<std::string, at::Tensor>> state_dict(const torch::nn::Module& m);

}  // namespace halo::model
