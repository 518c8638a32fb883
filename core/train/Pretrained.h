// Starting from pretrained weights (model.pretrained): a safetensors or torch.save file of
// timm-named tensors, matched key by key, shape by shape and dtype by dtype before any is copied.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace torch::nn {
class Module;
}

namespace halo::train {

// A tensor's name, shape and whether its dtype is floating point (what matching needs).
struct TensorSlot {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;  // "float", "half", "long", ...
  bool floating = true;
};

// Which file tensor goes into which model tensor, and what is left as the model made it.
struct PretrainedMatch {
  std::vector<std::pair<std::string, std::string>> load;  // (model name, file name)
  std::vector<std::string> reinitialised;                 // model names: the classifier head, its class count differs
  std::vector<std::string> skipped;  // file names: a model.pretrained_skip prefix, or timm's head for a backbone
  // Model names outside the backbone when the file is a backbone's (its names took the
  // prefix): the neck and heads start as initialised.
  std::vector<std::string> kept;
};

// Pure matching. A file name is looked up as it is, then (when `backbone_prefix` is not
// empty, e.g. "img_backbone.") with the prefix, so a timm backbone's keys load into a model
// that holds it; a backbone-only model skips timm's classifier ("head.", ResNet's "fc.") and, when the file's
// names took the prefix, keeps what lies outside the backbone as initialised. head.fc.* (fc.*) of a
// different class count is re-initialised. Every other difference -- a model tensor no file
// tensor fills, a file tensor the model has no place for, a shape or a non-float dtype that
// does not fit -- is listed, all at once, in one util::Error naming `file`, with a hint.
PretrainedMatch match_pretrained(const std::vector<TensorSlot>& model, const std::vector<TensorSlot>& file,
                                 const std::vector<std::string>& skip, const std::string& backbone_prefix,
                                 const std::string& file_path);

// Every tensor of a safetensors file or of a torch.save zip holding a plain {name: tensor}
// dict (read as data by LibTorch's unpickler: no code runs), on the CPU. util::Error naming
// the file for anything else; an OrderedDict (what model.state_dict() is), which that
// unpickler cannot read, gets the one-line conversion to safetensors as its hint.
std::vector<std::pair<std::string, at::Tensor>> read_weight_file(const std::string& path);

// "img_backbone." when `backbone` is a child of `root`, "" when it is `root` itself.
std::string backbone_prefix(const torch::nn::Module& root, const torch::nn::Module& backbone);

struct PretrainedResult {
  size_t loaded = 0;
  PretrainedMatch match;
};

// Reads `path`, matches it against `model`'s parameters and buffers and copies every matched
// tensor in (converted to the model tensor's dtype and device); nothing is copied when the
// match fails. check_only: match, copy nothing.
PretrainedResult load_pretrained(torch::nn::Module& model, const std::string& path,
                                 const std::vector<std::string>& skip, const std::string& backbone_prefix,
                                 bool check_only = false);

}  // namespace halo::train
