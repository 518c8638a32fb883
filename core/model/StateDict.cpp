// LibTorch's named_parameters() lists every parameter before any buffer; state_dict()'s order
// interleaves them per module, which is what a torch file written for timm must follow.
#include "model/StateDict.h"

namespace halo::model {

std::vector<std::pair<std::string, at::Tensor>> state_dict(const torch::nn::Module& m) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& mod : m.named_modules("", true)) {
    const std::string prefix = mod.key().empty() ? "" : mod.key() + ".";
    for (const auto& p : mod.value()->named_parameters(false)) out.emplace_back(prefix + p.key(), p.value());
    for (const auto& b : mod.value()->named_buffers(false)) out.emplace_back(prefix + b.key(), b.value());
  }
  return out;
}

}  // namespace halo::model
