// The worker joins the mesh from torchrun's variables, trains, and reports on stdout; it
// exits by itself when its launcher dies (PR_SET_PDEATHSIG).
#include "launch/Worker.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "parallel/Mesh.h"
#include "parallel/Rendezvous.h"
#include "train/ExperimentConfig.h"
#include "train/Trainer.h"
#include "util/Error.h"

namespace halo::launch {

namespace fs = std::filesystem;

namespace {

void emit(nlohmann::json j) {
  std::string line = j.dump();
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

train::ExperimentConfig read_config(const std::string& run_dir) {
  const std::string path = run_dir + "/config.json";
  std::ifstream in(path);
  if (!in) throw util::Error("cannot read " + path, "the launcher writes it; start runs with `halo launch`");
  auto result = train::parse_experiment(nlohmann::json::parse(in));
  if (!result.problems.empty()) throw util::Error(path + ":\n" + train::describe_problems(result.problems));
  return result.config;
}

}  // namespace

int run_worker(const WorkerOptions& o) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  train::MemoryTracker::install();
  int rank = -1;
  try {
    auto world = parallel::world_from_env();
    if (!world) throw util::Error("halo worker needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT", "start it with `halo launch`");
    rank = world->rank;
    const train::ExperimentConfig cfg = read_config(o.run_dir);
    torch::set_num_threads(cfg.parallel.threads_per_rank);
    const auto timeout = std::chrono::seconds(300);
    auto store = parallel::connect_store(*world, timeout);
    const bool nccl = cfg.parallel.device == "cuda" && cfg.parallel.backend != "gloo";
    auto mesh = std::make_shared<parallel::Mesh>(*world, store, parallel::MeshShape{cfg.parallel.dp, cfg.parallel.sp},
                                                 nccl ? parallel::BackendKind::Nccl : parallel::BackendKind::Gloo,
                                                 timeout);
    train::Trainer trainer(cfg, mesh);
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    emit({{"event", "hello"}, {"rank", rank}, {"world", world->world_size}, {"pid", ::getpid()},
          {"device", trainer.device_name()}, {"host", host}, {"sp_index", mesh->sp_index()}, {"dp_index", mesh->dp_index()}});
    if (!o.resume_from.empty()) trainer.load_checkpoint(o.resume_from);
    if (rank == 0) emit(trainer.layout_event());
    const fs::path ckpt_dir = fs::path(o.run_dir) / "checkpoints";
    auto checkpoint = [&](int64_t step) {
      if (rank == 0) {
        fs::create_directories(ckpt_dir);
        const std::string path = (ckpt_dir / fmt::format("step-{:06d}.pt", step)).string();
        trainer.save_checkpoint(path);
        emit({{"event", "checkpoint"}, {"rank", rank}, {"step", step}, {"path", path}, {"bytes", fs::file_size(path)}});
      }
      mesh->world().barrier();
    };
    while (!trainer.finished()) {
      const train::StepResult r = trainer.step();
      if (r.step % cfg.train.log_every == 0 || trainer.finished())
        emit({{"event", "step"}, {"rank", rank}, {"step", r.step}, {"losses", r.losses}, {"lr", r.lr},
              {"grad_norm", r.grad_norm}, {"loss_scale", r.loss_scale}, {"skipped", r.skipped},
              {"time_ms", {{"forward", r.time.forward_ms}, {"backward", r.time.backward_ms},
                           {"comm", r.time.comm_ms}, {"optim", r.time.optim_ms}, {"total", r.time.total_ms}}},
              {"memory", {{"current", r.memory.current}, {"peak", r.memory.peak}, {"reserved", r.memory.reserved},
                          {"rss", r.memory.rss}, {"step_start", r.memory_at_start}}},
              {"samples_per_s", r.samples_per_s}});
      const int64_t done = r.step + 1;
      if (cfg.train.checkpoint_every > 0 && done % cfg.train.checkpoint_every == 0 && !trainer.finished())
        checkpoint(done);
    }
    checkpoint(trainer.next_step());
    emit({{"event", "done"}, {"rank", rank}, {"steps", trainer.next_step()}});
    return 0;
  } catch (const util::Error& e) {
    emit({{"event", "error"}, {"rank", rank}, {"message", e.problem()}, {"hint", e.hint()}});
  } catch (const std::exception& e) {
    emit({{"event", "error"}, {"rank", rank}, {"message", e.what()}, {"hint", ""}});
  }
  return 1;
}

}  // namespace halo::launch
