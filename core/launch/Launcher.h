// `halo launch`: validates the whole experiment, creates the run folder, hosts the
// rendezvous store, spawns one worker per rank, records their events, reports each step to an
// observer (the CLI's progress line), and stops every rank when one dies or the user presses Ctrl-C.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "launch/NodePlacement.h"
#include "protocol/StepEvent.h"

namespace halo::launch {

// A step event of this node's first rank, as the launcher tells its observer.
struct StepProgress {
  protocol::StepEvent step;
  int64_t total_steps = 0;  // schedule.steps
  double elapsed_s = 0;     // since the ranks were started
};

struct LaunchOptions {
  std::string experiment;              // EXPERIMENT.json (unless resuming)
  std::vector<std::string> overrides;  // --set key=value
  int nproc = 0;                       // ranks on this node; 0: sp x dp / nnodes from the experiment
  std::string resume_dir;              // --resume RUN_DIR
  std::string runs_root = "runs";
  int kill_grace_s = 5;
  // nodes.master_port is the rendezvous port; on one node, 0 or taken: a free one is chosen.
  // Node 0 hosts the store (all interfaces when multi-node); node R > 0 records its ranks in
  // <run folder>/node<R> and writes no run history (node 0's is the run's record).
  NodePlacement nodes;
  std::string db_path;                               // run history (--db); empty: $HALO_DB or the default history file
  std::function<void(const StepProgress&)> on_step;  // may be empty; called on the launcher's thread
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
