// `halo export`: a resume checkpoint to plain full tensors named as timm names ConvNeXt
// weights: one safetensors file (config in its metadata) or a torch.load-able file, plus
// a JSON manifest beside it.
#pragma once

#include <string>

namespace halo::train {

struct ExportOptions {
  std::string checkpoint;              // <run>/checkpoints/step-*.pt
  std::string output;                  // model.safetensors | model.pt
  std::string format = "safetensors";  // safetensors | torch
};

struct ExportResult {
  std::string output, manifest;
  std::string arch;
  int64_t step = 0;
  size_t tensors = 0;
  int64_t bytes = 0;
};

ExportResult export_checkpoint(const ExportOptions& o);

}  // namespace halo::train
