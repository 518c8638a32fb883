// `halo export`: a resume checkpoint to plain full tensors named as timm names ConvNeXt
// weights: one safetensors file (config in its metadata) or a torch.load-able file, plus
// a JSON manifest beside it.
#pragma once

#include <string>
#include <vector>

namespace halo::train {

struct ExportOptions {
  std::string checkpoint;              // <run>/checkpoints/step-*.pt
  std::string output;                  // model.safetensors | model.pt
  std::string format = "safetensors";  // safetensors | torch
  bool force = false;                  // replace an existing output (never a checkpoint or a history)
  std::vector<std::string> keep;       // files never to overwrite, e.g. the run history
};

struct ExportResult {
  std::string output, manifest;
  std::string arch;
  int64_t step = 0;
  size_t tensors = 0;
  int64_t bytes = 0;
};

// Refuses (util::Error, nothing written) an output or manifest that is the checkpoint itself,
// any resume checkpoint (step-<digits>.pt, or a file in a run's checkpoints/ folder), a SQLite
// file (a run history) or one of o.keep, and without o.force any existing file.
ExportResult export_checkpoint(const ExportOptions& o);

}  // namespace halo::train
