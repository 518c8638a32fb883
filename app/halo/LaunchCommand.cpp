// `halo launch` (start or resume a run) and `halo worker` (one rank, started by launch).
// Exit code 0 only when every rank finished.
#include <cstdio>

#include "Commands.h"
#include "launch/Launcher.h"
#include "launch/Worker.h"

namespace halo::app {

void add_launch_commands(CLI::App& app) {
  auto o = std::make_shared<launch::LaunchOptions>();
  auto* l = app.add_subcommand("launch", "Start a training run from an experiment file (or resume one)");
  l->add_option("experiment", o->experiment, "EXPERIMENT.json (see experiments/)");
  l->add_option("--nproc", o->nproc, "number of ranks (must equal parallel.sp x parallel.dp)");
  l->add_option("--set", o->overrides, "override a field: --set optim.lr=3e-4 (repeatable)");
  l->add_option("--resume", o->resume_dir, "continue the run in RUN_DIR from its latest checkpoint");
  l->add_option("--runs", o->runs_root, "folder for new run folders")->capture_default_str();
  l->add_option("--port", o->port, "rendezvous port on 127.0.0.1 (default: $MASTER_PORT, else a free one; a taken port is replaced by a free one)")
      ->envname("MASTER_PORT");
  l->add_flag("!--no-progress", o->progress, "no progress line");
  l->add_option("--db", o->db_path, "run history file (default: $HALO_DB, else ~/.local/share/halo/history.db)");
  l->callback([o]() {
    if (o->experiment.empty() == o->resume_dir.empty())
      throw CLI::ValidationError("halo launch", "give either EXPERIMENT.json or --resume RUN_DIR");
    launch::LaunchResult r = launch::run_launch(*o);
    if (r.exit_code != 0) {
      std::fprintf(stderr, "halo: run %s failed: %s\n", r.run_dir.c_str(), r.failure.c_str());
      throw CLI::RuntimeError(r.exit_code);
    }
    std::printf("run %s finished: %lld steps, last loss %.4f\n", r.run_dir.c_str(), static_cast<long long>(r.steps),
                r.last_loss);
  });

  auto w = std::make_shared<launch::WorkerOptions>();
  auto* wk = app.add_subcommand("worker", "One rank of a run (started by `halo launch` or torchrun)");
  wk->add_option("--run-dir", w->run_dir, "run folder holding config.json")->required();
  wk->add_option("--resume", w->resume_from, "checkpoint to resume from");
  wk->callback([w]() {
    const int code = launch::run_worker(*w);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace halo::app
