// `halo worker`: one rank of a run, started by the launcher (or torchrun). Prints one JSON
// object per line, core/protocol's events: hello, layout, step, eval, checkpoint, error, done.
#pragma once

#include <string>

namespace halo::launch {

struct WorkerOptions {
  std::string run_dir;      // holds config.json; checkpoints go to <run_dir>/checkpoints
  std::string resume_from;  // checkpoint file, or empty
};

// Returns the process exit code (0 on success); errors are printed as an error event.
int run_worker(const WorkerOptions& o);

}  // namespace halo::launch
