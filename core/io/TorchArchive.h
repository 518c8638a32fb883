// Loading a LibTorch archive (torch::serialize, e.g. a Halo checkpoint) as data only: the
// archive's TorchScript code may declare attributes but no methods, so nothing runs on load.
#pragma once

#include <string>

namespace torch::serialize {
class InputArchive;
}

namespace halo::io {

// Checks `path` (a zip written by torch::serialize::OutputArchive) and loads it into `ar`.
// Refused with a util::Error naming the file and the record: a file that is not such an
// archive, and any code/ record defining a method (`def`, e.g. __setstate__), which
// torch::jit would compile and run while loading. Pickle globals are resolved by
// torch::jit's unpickler, which knows only TorchScript types and never imports modules.
void load_torch_archive(const std::string& path, torch::serialize::InputArchive& ar);

}  // namespace halo::io
