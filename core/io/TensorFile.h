// LibTorch adapters: named at::Tensors to and from safetensors files, and to a zip file
// that Python's torch.load(path, weights_only=True) returns as {name: tensor}.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace halo::io {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Saves detached, contiguous CPU copies of `tensors` in the order given (atomic, see
// write_safetensors). Dtypes: bool, uint8/16/32/64, int8/16/32/64, half, bfloat16,
// float, double; anything else is a util::Error naming the tensor.
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata);

// Loads every tensor (CPU, sorted by name, no copy of the file's bytes). Fills `metadata`
// with __metadata__ when given. Malformed files throw util::Error (see read_safetensors).
NamedTensors load_safetensors(const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

// Writes a torch.save-style zip (data.pkl + one record per storage) holding a plain dict
// {name: tensor} of detached, contiguous CPU tensors, in the order given. The pickle uses
// only globals that torch.load(weights_only=True) allows by default. Atomic like above.
// Dtypes: bool, uint8, int8/16/32/64, half, bfloat16, float, double, complex64/128
// (uint16/32/64 have no storage class a weights-only load accepts: a util::Error).
void save_torch_state_dict(const std::string& path, const NamedTensors& tensors);

}  // namespace halo::io
