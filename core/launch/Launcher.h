// `halo launch`: validates the whole experiment, creates the run folder, hosts the
// rendezvous store, spawns one worker per rank, shows progress, and stops every rank when
// one dies or the user presses Ctrl-C.
#pragma once

#include <string>
#include <vector>

namespace halo::launch {

struct LaunchOptions {
  std::string experiment;              // EXPERIMENT.json (unless resuming)
  std::vector<std::string> overrides;  // --set key=value
  int nproc = 0;                       // 0: sp x dp from the experiment
  std::string resume_dir;              // --resume RUN_DIR
  std::string runs_root = "runs";
  bool progress = true;
  int kill_grace_s = 5;
  uint16_t port = 0;  // rendezvous port (--port / MASTER_PORT); 0 or taken: a free one is chosen
  std::string db_path;  // run history (--db); empty: $HALO_DB or the default history file
};

struct LaunchResult {
  int exit_code = 0;
  std::string run_dir;
  int64_t steps = 0;
  double last_loss = 0;
  std::string failure;  // why it stopped, when it did not finish
};

LaunchResult run_launch(const LaunchOptions& o);

}  // namespace halo::launch
