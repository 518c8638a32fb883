// The worker joins the mesh from torchrun's variables, trains, and reports on stdout; it
// exits by itself when its launcher dies (PR_SET_PDEATHSIG).
// Environment: HALO_COLLECTIVE_TIMEOUT (seconds, default 300) bounds every collective and
// the rendezvous. Test-only hook: HALO_TEST_STALL_AT_STEP=N with HALO_TEST_STALL_RANK=R makes
// rank R stop responding before step N (the fault tests use it to hang one rank), and
// HALO_TEST_FSIZE_LIMIT=BYTES limits the size of files this rank writes (RLIMIT_FSIZE), so
// a checkpoint write fails like on a full disk.
#include "launch/Worker.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "config/ExperimentConfig.h"
#include "eval/PredictionsJson.h"
#include "io/AtomicFile.h"
#include "parallel/Mesh.h"
#include "parallel/Rendezvous.h"
#include "train/OpenLaneTask.h"
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

config::ExperimentConfig read_config(const std::string& run_dir) {
  const std::string path = run_dir + "/config.json";
  std::ifstream in(path);
  if (!in) throw util::Error("cannot read " + path, "the launcher writes it; start runs with `halo launch`");
  auto result = config::parse_experiment(nlohmann::json::parse(in));
  if (!result.problems.empty()) throw util::Error(path + ":\n" + config::describe_problems(result.problems));
  return result.config;
}

long env_long(const char* name, long lo, long hi, long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < lo || x > hi)
    throw util::Error(fmt::format("environment variable {}='{}' is not an integer in [{}, {}]", name, v, lo, hi),
                      fmt::format("set {} to a whole number of seconds, or unset it", name));
  return x;
}

// Test-only: rank HALO_TEST_STALL_RANK hangs (sleeps until killed) before step HALO_TEST_STALL_AT_STEP.
void maybe_stall(int rank, int64_t step) {
  const long at = env_long("HALO_TEST_STALL_AT_STEP", 0, 1L << 40, -1);
  if (at != step || env_long("HALO_TEST_STALL_RANK", 0, 1 << 20, 0) != rank) return;
  std::fprintf(stderr, "halo worker: HALO_TEST_STALL_AT_STEP=%ld: rank %d stalls\n", at, rank);
  for (;;) ::pause();
}

}  // namespace

int run_worker(const WorkerOptions& o) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The launcher may have died before prctl: then nobody would signal us.
  if (const char* launcher = std::getenv("HALO_LAUNCHER_PID"); launcher && std::to_string(::getppid()) != launcher) {
    std::fprintf(stderr, "halo worker: launcher %s is gone; exiting\n", launcher);
    return 1;
  }
  // A write past RLIMIT_FSIZE fails with EFBIG (reported like a full disk) instead of killing us.
  std::signal(SIGXFSZ, SIG_IGN);
  if (const char* limit = std::getenv("HALO_TEST_FSIZE_LIMIT")) {  // test-only: files stop growing here
    const rlimit r{std::strtoull(limit, nullptr, 10), std::strtoull(limit, nullptr, 10)};
    ::setrlimit(RLIMIT_FSIZE, &r);
  }
  train::MemoryTracker::install();
  int rank = -1;
  // Outside the try: after an error they stay alive, so no destructor waits on a hung peer.
  std::shared_ptr<parallel::Mesh> mesh;
  std::unique_ptr<train::Trainer> trainer_ptr;
  try {
    auto world = parallel::world_from_env();
    if (!world)
      throw util::Error("halo worker needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT",
                        "start it with `halo launch`");
    rank = world->rank;
    const config::ExperimentConfig cfg = read_config(o.run_dir);
    torch::set_num_threads(cfg.parallel.threads_per_rank);
    const auto collective_timeout = std::chrono::seconds(env_long("HALO_COLLECTIVE_TIMEOUT", 1, 86400 * 7, 300));
    const auto join_timeout = std::max(collective_timeout, std::chrono::seconds(300));  // ranks start unevenly
    auto store = parallel::connect_store(*world, join_timeout);
    const bool nccl = cfg.parallel.device == config::Device::Cuda && cfg.parallel.backend != config::Backend::Gloo;
    mesh = std::make_shared<parallel::Mesh>(*world, store, parallel::MeshShape{cfg.parallel.dp, cfg.parallel.sp},
                                            nccl ? parallel::BackendKind::Nccl : parallel::BackendKind::Gloo,
                                            collective_timeout);
    trainer_ptr = std::make_unique<train::Trainer>(cfg, mesh);
    train::Trainer& trainer = *trainer_ptr;
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    emit({{"event", "hello"},
          {"rank", rank},
          {"world", world->world_size},
          {"pid", ::getpid()},
          {"device", trainer.device_name()},
          {"host", host},
          {"sp_index", mesh->sp_index()},
          {"dp_index", mesh->dp_index()}});
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
    // Every rank runs the forward over data.eval_split; rank 0 writes the predictions in the
    // devkit's format and reports the scores.
    auto evaluate = [&](int64_t step, int64_t done) {
      const train::OpenLaneEvaluation e = trainer.evaluate();
      if (rank != 0) return;
      const fs::path dir = fs::path(o.run_dir) / "predictions";
      fs::create_directories(dir);
      const std::string path = (dir / fmt::format("step-{:06d}.json", done)).string();
      const std::string text = eval::predictions_to_json(e.predictions, cfg.name).dump();
      io::AtomicFile file(path);
      file.write(text.data(), text.size());
      file.commit();
      emit({{"event", "eval"},
            {"rank", rank},
            {"step", step},
            {"steps_trained", done},
            {"split", config::name_of(cfg.data.eval_split)},
            {"DET_l", e.scores.det_l},
            {"DET_t", e.scores.det_t},
            {"TOP_ll", e.scores.top_ll},
            {"TOP_lt", e.scores.top_lt},
            {"OLS", e.scores.ols},
            {"frames", e.scores.frames},
            {"predictions", path}});
    };
    while (!trainer.finished()) {
      maybe_stall(rank, trainer.next_step());
      const train::StepResult r = trainer.step();
      if (r.step % cfg.train.log_every == 0 || trainer.finished())
        emit({{"event", "step"},
              {"rank", rank},
              {"step", r.step},
              {"losses", r.losses},
              {"lr", r.lr},
              {"grad_norm", r.grad_norm},
              {"loss_scale", r.loss_scale},
              {"skipped", r.skipped},
              {"time_ms",
               {{"forward", r.time.forward_ms},
                {"backward", r.time.backward_ms},
                {"comm", r.time.comm_ms},
                {"optim", r.time.optim_ms},
                {"total", r.time.total_ms}}},
              {"memory",
               {{"current", r.memory.current},
                {"peak", r.memory.peak},
                {"reserved", r.memory.reserved},
                {"rss", r.memory.rss},
                {"step_start", r.memory_at_start}}},
              {"samples_per_s", r.samples_per_s}});
      const int64_t done = r.step + 1;
      if (cfg.train.eval_every > 0 && (done % cfg.train.eval_every == 0 || trainer.finished())) evaluate(r.step, done);
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
  // Communication may still be in flight (a peer hung or died): exit without running the
  // process groups' destructors, which would wait for it. The error is out; files are closed.
  if (mesh) {
    std::fflush(nullptr);
    ::_exit(1);
  }
  return 1;
}

}  // namespace halo::launch
