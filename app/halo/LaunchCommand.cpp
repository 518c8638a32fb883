// `halo launch` (start or resume a run) and `halo worker` (one rank, started by launch).
// Exit code 0 only when every rank finished. The progress line is printed here, from the
// launcher's step reports.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "Commands.h"
#include "launch/Launcher.h"
#include "launch/Worker.h"

namespace halo::app {

namespace {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  return fmt::format("{:.1f} {}", b, units[u]);
}

std::string eta(double seconds) {
  const auto s = static_cast<int64_t>(seconds);
  return fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60);
}

// `step N/T  loss L  R it/s  ETA h:mm:ss  peak M` on stderr: rewritten in place on a terminal,
// one line per step event otherwise. The rate counts from the first step seen (a resumed run
// starts late).
class ProgressLine {
 public:
  void operator()(const launch::StepProgress& p) {
    const int64_t step = p.step.step;
    if (first_step_ < 0) first_step_ = step;
    const double rate = static_cast<double>(step - first_step_ + 1) / std::max(p.elapsed_s, 1e-9);
    const std::string msg =
        fmt::format("step {}/{}  loss {:.4f}  {:.2f} it/s  ETA {}  peak {}", step + 1, p.total_steps, p.step.loss(),
                    rate, eta(static_cast<double>(p.total_steps - step - 1) / std::max(rate, 1e-9)),
                    human_bytes(static_cast<double>(p.step.memory.peak)));
    std::fprintf(stderr, tty_ ? "\r%-100s" : "%s\n", msg.c_str());
  }
  void end() const {
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  int64_t first_step_ = -1;
  bool tty_ = ::isatty(2) != 0;
};

}  // namespace

void add_launch_commands(CLI::App& app) {
  auto o = std::make_shared<launch::LaunchOptions>();
  auto* l = app.add_subcommand("launch", "Start a training run from an experiment file (or resume one)");
  l->add_option("experiment", o->experiment, "EXPERIMENT.json (see experiments/)");
  auto flags = std::make_shared<launch::NodeFlags>();
  l->add_option("--nproc", o->nproc, "ranks on this node (default: parallel.sp x parallel.dp / nnodes)")
      ->check(CLI::PositiveNumber);
  l->add_option("--nnodes", flags->nnodes,
                "number of nodes, one `halo launch` each (default: $NNODES, $SLURM_NNODES, 1)")
      ->check(CLI::Range(1, 1 << 16));
  l->add_option("--node-rank", flags->node_rank,
                "this node's index in [0, nnodes) (default: $NODE_RANK, $SLURM_NODEID)")
      ->check(CLI::NonNegativeNumber);
  l->add_option(
      "--master-addr", flags->master_addr,
      "node 0's address, multi-node only (default: $MASTER_ADDR, else the first host of $SLURM_JOB_NODELIST)");
  l->add_option("--set", o->overrides, "override a field: --set optim.lr=3e-4 (repeatable)");
  l->add_option("--resume", o->resume_dir, "continue the run in RUN_DIR from its latest checkpoint");
  l->add_option("--runs", o->runs_root, "folder for new run folders")->capture_default_str();
  l->add_option(
      "--master-port,--port", flags->master_port,
      "rendezvous port (default: $MASTER_PORT, else a free one, or 29500 when multi-node; on one node a taken "
      "port is replaced by a free one)");
  auto progress = std::make_shared<bool>(true);
  l->add_flag("!--no-progress", *progress, "no progress line");
  l->add_option("--db", o->db_path, "run history file (default: $HALO_DB, else ~/.local/share/halo/history.db)");
  l->callback([o, flags, progress]() {
    if (o->experiment.empty() == o->resume_dir.empty())
      throw CLI::ValidationError("halo launch", "give either EXPERIMENT.json or --resume RUN_DIR");
    o->nodes = launch::resolve_node_placement(*flags, launch::process_environment());
    auto line = std::make_shared<ProgressLine>();
    if (*progress) o->on_step = [line](const launch::StepProgress& p) { (*line)(p); };
    launch::LaunchResult r = launch::run_launch(*o);
    if (*progress) line->end();
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
