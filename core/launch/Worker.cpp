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
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>

#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "config/ExperimentConfig.h"
#include "eval/PredictionsJson.h"
#include "io/AtomicFile.h"
#include "parallel/ExchangeClock.h"
#include "parallel/Mesh.h"
#include "parallel/PeerLostError.h"
#include "parallel/Rendezvous.h"
#include "protocol/Event.h"
#include "train/CheckpointName.h"
#include "train/CpuHeap.h"
#include "train/OpenLaneTask.h"
#include "train/StepProfiler.h"
#include "train/Trainer.h"
#include "util/Error.h"

namespace halo::launch {

namespace fs = std::filesystem;

namespace {

void emit(const protocol::Event& e) {
  std::string line = protocol::to_line(e);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

protocol::StepEvent step_event(int rank, const train::StepResult& r) {
  protocol::StepEvent e;
  e.rank = rank;
  e.step = r.step;
  e.losses = r.losses;
  e.lr = r.lr;
  e.grad_norm = r.grad_norm;
  e.loss_scale = r.loss_scale;
  e.skipped = r.skipped;
  e.time_ms = {r.time.forward_ms, r.time.backward_ms, r.time.comm_ms, r.time.optim_ms, r.time.total_ms};
  e.memory = {r.memory.current, r.memory.peak, r.memory.reserved, r.memory.rss, r.memory_at_start};
  e.samples_per_s = r.samples_per_s;
  return e;
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

// From the rank's start until run_worker returns, whatever its main thread is doing (a long
// step, a checkpoint, a collective): a heartbeat line every `every_ms` for the launcher's
// silence watch. Only a stopped or frozen process falls silent.
std::jthread start_heartbeat(int rank, long every_ms) {
  return std::jthread([rank, every_ms](std::stop_token stop) {
    std::mutex m;
    std::condition_variable_any wake;
    std::unique_lock lock(m);
    while (!stop.stop_requested()) {
      emit(protocol::HeartbeatEvent{rank});
      wake.wait_for(lock, stop, std::chrono::milliseconds(every_ms), [] { return false; });
    }
  });
}

// Test-only: rank HALO_TEST_STALL_RANK hangs (sleeps until killed) before step HALO_TEST_STALL_AT_STEP.
void maybe_stall(int rank, int64_t step) {
  const long at = env_long("HALO_TEST_STALL_AT_STEP", 0, 1L << 40, -1);
  if (at != step || env_long("HALO_TEST_STALL_RANK", 0, 1 << 20, 0) != rank) return;
  std::fprintf(stderr, "halo worker: HALO_TEST_STALL_AT_STEP=%ld: rank %d stalls\n", at, rank);
  for (;;) ::pause();
}

// The exchange clock over this process's steps 2..5 (the first warms up), or all of a shorter
// run: reset after the first, the `exchange` event after the fifth or the last. True once sent.
bool report_exchange(int rank, int64_t taken, bool last) {
  constexpr int64_t kLastMeasured = 5;
  if (taken == 1 && !last) {
    parallel::ExchangeClock::reset();
    return false;
  }
  if (taken < kLastMeasured && !last) return false;
  const int64_t steps = taken == 1 ? 1 : taken - 1;
  protocol::ExchangeEvent e{rank, steps, {}};
  for (const auto& [label, seconds] : parallel::ExchangeClock::seconds())
    e.ms[label] = seconds * 1e3 / static_cast<double>(steps);
  emit(e);
  return true;
}

void write_profile(const std::string& run_dir, int rank, const train::StepProfile& p) {
  const std::string text = nlohmann::json(p).dump();
  io::AtomicFile file((fs::path(run_dir) / fmt::format("profile-rank{}.json", rank)).string());
  file.write(text.data(), text.size());
  file.commit();
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
  train::keep_freed_cpu_memory();  // each step's tensors reuse the last step's pages
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
    const std::jthread heartbeat = start_heartbeat(rank, env_long("HALO_HEARTBEAT_MS", 10, 3'600'000, 2000));
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
    emit(protocol::HelloEvent{rank, world->world_size, ::getpid(), trainer.device_name(), host, mesh->sp_index(),
                              mesh->dp_index()});
    if (const std::string pw = trainer.pointwise_summary(); !pw.empty())
      std::fprintf(stderr, "halo worker: rank %d: per-pixel products: %s\n", rank, pw.c_str());
    if (!o.resume_from.empty())
      trainer.load_checkpoint(o.resume_from);
    else if (!cfg.model.pretrained.empty()) {
      const train::PretrainedResult p = trainer.load_pretrained();
      std::fprintf(stderr, "halo worker: rank %d: %zu tensor(s) from %s\n", rank, p.loaded,
                   cfg.model.pretrained.c_str());
    }
    if (rank == 0) emit(trainer.layout_event());
    if (mesh->dp_index() == 0) trainer.keep_preview();  // the layout view's pictures, from the first step
    const fs::path ckpt_dir = fs::path(o.run_dir) / "checkpoints";
    auto checkpoint = [&](int64_t step) {
      const std::string path = (ckpt_dir / train::checkpoint_file_name(step)).string();
      if (rank == 0) fs::create_directories(ckpt_dir);
      trainer.save_checkpoint(path);  // every rank: ZeRO's state is gathered first; rank 0 writes
      if (rank == 0) emit(protocol::CheckpointEvent{rank, step, path, static_cast<int64_t>(fs::file_size(path))});
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
      const eval::Scores& s = e.scores;
      emit(protocol::EvalEvent{rank, step, done, config::name_of(cfg.data.eval_split), s.det_l, s.det_t, s.top_ll,
                               s.top_lt, s.ols, s.frames, path});
    };
    // HALO_PROFILE_STEP=N (halo bench step --profile): step N under LibTorch's profiler, its
    // per-op times to <run_dir>/profile-rank<r>.json.
    const long profile_step = env_long("HALO_PROFILE_STEP", 0, 1L << 40, -1);
    int64_t taken = 0;                           // steps this process took
    bool exchange_sent = mesh->dp_index() != 0;  // data-parallel group 0 reports its exchange times
    bool timeline_kept = mesh->dp_index() != 0;  // and the memory timeline of their second step
    while (!trainer.finished()) {
      maybe_stall(rank, trainer.next_step());
      if (!timeline_kept && (taken == 1 || trainer.next_step() + 1 >= cfg.schedule.steps)) {
        trainer.keep_timeline();  // the second step: the optimizer state exists (or the only step)
        timeline_kept = true;
      }
      std::optional<train::StepProfiler> profiler;
      if (profile_step >= 0 && trainer.next_step() == profile_step)
        profiler.emplace().start(cfg.parallel.device == config::Device::Cuda);
      const train::StepResult r = trainer.step();
      if (profiler) write_profile(o.run_dir, rank, profiler->stop(r.time.total_ms));
      if (auto timeline = trainer.take_timeline()) emit(*timeline);
      if (!exchange_sent) exchange_sent = report_exchange(rank, ++taken, trainer.finished());
      try {
        trainer.write_preview(o.run_dir);  // after the first step only; nothing to write later
      } catch (const util::Error& e) {     // a picture is not worth the run
        std::fprintf(stderr, "halo worker: rank %d: warning: %s\n", rank, e.what());
      }
      if (r.step % cfg.train.log_every == 0 || trainer.finished() || !r.nonfinite.empty()) emit(step_event(rank, r));
      if (!r.nonfinite.empty())
        throw util::Error(r.nonfinite,
                          "lower optim.lr or set optim.grad_clip; or --set train.nonfinite=skip to skip such steps "
                          "and go on");
      const int64_t done = r.step + 1;
      if (cfg.train.eval_every > 0 && (done % cfg.train.eval_every == 0 || trainer.finished())) evaluate(r.step, done);
      if (cfg.train.checkpoint_every > 0 && done % cfg.train.checkpoint_every == 0 && !trainer.finished())
        checkpoint(done);
    }
    checkpoint(trainer.next_step());
    emit(protocol::DoneEvent{rank, trainer.next_step()});
    return 0;
  } catch (const util::Error& e) {
    emit(
        protocol::ErrorEvent{rank, e.problem(), e.hint(), dynamic_cast<const parallel::PeerLostError*>(&e) != nullptr});
  } catch (const std::exception& e) {
    emit(protocol::ErrorEvent{rank, e.what(), ""});
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
