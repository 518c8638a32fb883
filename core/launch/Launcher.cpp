// Before launch: the experiment checked, the run folder locked, the history row begun, the
// rendezvous store up. Then the ranks run under supervise(): RankLineReader, RunRecorder, RankStopper.
#include "launch/Launcher.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "arch/Backbones.h"
#include "config/ExperimentConfig.h"
#include "io/AtomicFile.h"
#include "launch/RankLineReader.h"
#include "launch/RankSpawner.h"
#include "launch/RankStopper.h"
#include "launch/ResumePoint.h"
#include "launch/RunRecorder.h"
#include "memory/DeviceCapacity.h"
#include "model/ConvNeXt.h"
#include "parallel/Rendezvous.h"
#include "protocol/EventLine.h"
#include "shard/ShardingCheck.h"
#include "store/HistoryDb.h"
#include "train/CheckpointName.h"
#include "train/Pretrained.h"
#include "train/TaskFactory.h"
#include "util/Error.h"

namespace halo::launch {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;
// How long a rank's lost-peer error waits for the peer's own failure to be seen (its exit is
// reaped within a poll; a rank on another node never is).
constexpr std::chrono::seconds kPeerWait{2};

namespace {

std::atomic<int> g_interrupted{0};  // the signal that stops the run: SIGINT (Ctrl-C) or SIGTERM
void on_stop_signal(int signal) { g_interrupted = signal; }

// What the history and the terminal say about a stop by `signal`.
std::string stopped_by(int signal) { return signal == SIGTERM ? "stopped by SIGTERM" : "stopped by the user (Ctrl-C)"; }

std::string timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

// A new run must not write into a folder that holds one (its config, events, checkpoints).
void refuse_folder_with_a_run(const fs::path& run_dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const char* f : {"config.json", "events.jsonl", "checkpoints"})
    if (fs::exists(run_dir / f, ec)) found.emplace_back(f);
  if (found.empty()) return;
  throw util::Error(fmt::format("run folder {} already holds a run ({}); nothing was changed", run_dir.string(),
                                fmt::join(found, ", ")),
                    fmt::format("continue it with `halo launch --resume {}`, or give the experiment another "
                                "run_dir (or none: each run then gets runs/<name>-<time>)",
                                run_dir.string()));
}

// The run's config and folder: a new one from the experiment, or the folder being resumed
// with its latest checkpoint.
struct RunSetup {
  config::ExperimentConfig cfg;
  fs::path run_dir;
  std::string resume_from;
};

RunSetup load_run(const LaunchOptions& o) {
  RunSetup s;
  if (!o.resume_dir.empty()) {
    s.run_dir = o.resume_dir;
    ResumePlan plan = plan_resume(s.run_dir.string(), o.overrides);
    for (const auto& w : plan.point.warnings) std::fprintf(stderr, "halo: warning: %s\n", w.c_str());
    for (const auto& n : plan.notes) std::fprintf(stderr, "halo: %s\n", n.c_str());
    s.cfg = std::move(plan.cfg);
    s.resume_from = plan.point.path;
    return s;
  }
  std::vector<std::string> warnings;
  s.cfg = config::load_experiment(o.experiment, o.overrides, &warnings);
  for (const auto& w : warnings) std::fprintf(stderr, "halo: warning: %s\n", w.c_str());
  s.run_dir = s.cfg.run_dir.empty() ? fs::path(o.runs_root) / fmt::format("{}-{}", s.cfg.name, timestamp())
                                    : fs::path(s.cfg.run_dir);
  return s;
}

// One launcher per run folder: the lock comes first, so a second launcher is refused for
// that reason and never touches the history. Returns the locked descriptor.
int lock_run_folder(const fs::path& run_dir) {
  const int fd = ::open((run_dir / ".launcher.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (fd >= 0) ::close(fd);
    throw util::Error(fmt::format("another launcher is using run folder {}", run_dir.string()),
                      "wait for it to finish, or start a new run");
  }
  return fd;
}

// HALO_SILENCE_S: how long a rank may write nothing (not even its heartbeat); default 20 s.
long silence_limit_s() {
  const char* v = std::getenv("HALO_SILENCE_S");
  if (v == nullptr || *v == '\0') return 20;
  char* end = nullptr;
  const long s = std::strtol(v, &end, 10);
  if (*end != '\0' || s < 1 || s > 86400 * 7)
    throw util::Error(
        fmt::format("environment variable HALO_SILENCE_S='{}' is not a number of seconds in [1, 604800]", v),
        "set it to how long a rank may write nothing before the run is stopped, or unset it");
  return s;
}

// Everything about the experiment that must hold before any process starts; returns the
// number of ranks on this node.
int check_before_launch(config::ExperimentConfig& cfg, int nproc, const NodePlacement& nodes) {
  const int world = cfg.world_size();
  if (!nodes.multi_node() && nproc > 0 && nproc != world)
    throw util::Error(fmt::format("--nproc {} does not match parallel.sp x parallel.dp = {} x {} = {}", nproc,
                                  cfg.parallel.sp, cfg.parallel.dp, world),
                      fmt::format("drop --nproc, or use --set parallel.sp={}", nproc / std::max(1, cfg.parallel.dp)));
  if (nodes.multi_node() && nproc == 0 && world % nodes.nnodes != 0)
    throw util::Error(fmt::format("parallel.sp x parallel.dp = {} x {} = {} ranks do not split evenly over {} nodes",
                                  cfg.parallel.sp, cfg.parallel.dp, world, nodes.nnodes),
                      "change parallel.dp (or sp) so that sp x dp is a multiple of --nnodes");
  if (nodes.multi_node() && nproc > 0 && nproc * nodes.nnodes != world)
    throw util::Error(
        fmt::format("--nnodes {} x --nproc {} = {} ranks, but parallel.sp x parallel.dp = {} x {} = {}", nodes.nnodes,
                    nproc, nodes.nnodes * nproc, cfg.parallel.sp, cfg.parallel.dp, world),
        fmt::format("drop --nproc (then sp x dp / nnodes ranks run per node), or use --set parallel.dp={}",
                    nodes.nnodes * nproc / std::max(1, cfg.parallel.sp)));
  silence_limit_s();  // a bad HALO_SILENCE_S is refused before any rank starts
  if (const auto layers = arch::backbone_layers(cfg.model.arch))
    shard::check_shardable(layers->windows(), cfg.data.width, cfg.parallel.sp);
  return nodes.multi_node() && nproc == 0 ? world / nodes.nnodes : (nproc > 0 ? nproc : world);
}

// CPU ranks of this node whose threads outnumber its cores compete for them: say so, with
// the setting that fits (a warning: the user may know better, e.g. under a CPU quota).
void warn_thread_budget(const config::ExperimentConfig& cfg, int nlocal) {
  const unsigned cores = std::thread::hardware_concurrency();
  const int64_t threads = static_cast<int64_t>(nlocal) * cfg.parallel.threads_per_rank;
  if (cfg.parallel.device != config::Device::Cpu || cores == 0 || threads <= cores) return;
  const std::string fix =
      static_cast<unsigned>(nlocal) > cores
          ? "even one thread per rank is more than the cores: fewer ranks per node (parallel.sp x dp, --nproc) fit"
          : fmt::format("--set parallel.threads_per_rank={} fits", static_cast<int>(cores) / nlocal);
  std::fprintf(stderr,
               "halo: warning: %d rank(s) x parallel.threads_per_rank %d = %lld threads on %u core(s): the ranks "
               "will compete for cores and run slower; %s\n",
               nlocal, cfg.parallel.threads_per_rank, static_cast<long long>(threads), cores, fix.c_str());
}

// model.pretrained of a new run, before anything is written: the path made absolute (the
// ranks and a later resume read it from config.json), every tensor matched against the model.
void check_pretrained(config::ExperimentConfig& cfg) {
  if (cfg.model.pretrained.empty()) return;
  cfg.model.pretrained = fs::absolute(cfg.model.pretrained).lexically_normal().string();
  const train::BareModel bare = train::make_model(cfg);
  const train::PretrainedMatch m =
      train::load_pretrained(*bare.module, cfg.model.pretrained, cfg.model.pretrained_skip, bare.backbone_prefix,
                             /*check_only=*/true)
          .match;
  std::string note = fmt::format("halo: model.pretrained {}: {} tensor(s) load", cfg.model.pretrained, m.load.size());
  if (!m.reinitialised.empty())
    note += fmt::format("; re-initialised (class count differs): {}", fmt::join(m.reinitialised, ", "));
  if (!m.skipped.empty()) note += fmt::format("; {} in the file not loaded (skipped)", m.skipped.size());
  if (!m.kept.empty()) note += fmt::format("; {} outside the backbone start as initialised", m.kept.size());
  std::fprintf(stderr, "%s\n", note.c_str());
}

// The rendezvous store on 127.0.0.1: at `wanted` when given and free, else on a free port.
// Node 0 of a multi-node run: on every interface, at exactly `wanted` (the other nodes use it).
std::unique_ptr<parallel::LocalStoreServer> start_store(uint16_t wanted, int world, bool multi_node) {
  const auto timeout = std::chrono::seconds(300);
  if (multi_node) return std::make_unique<parallel::LocalStoreServer>(wanted, world, timeout, /*all_interfaces=*/true);
  if (wanted == 0) return std::make_unique<parallel::LocalStoreServer>(0, world, timeout);
  try {
    return std::make_unique<parallel::LocalStoreServer>(wanted, world, timeout);
  } catch (const util::Error& e) {
    auto server = std::make_unique<parallel::LocalStoreServer>(0, world, timeout);
    std::fprintf(stderr, "halo: rendezvous port %u is taken (%s); using port %u instead\n", wanted, e.problem().c_str(),
                 server->port());
    return server;
  }
}

// Node R > 0: a client of node 0's store, so an unreachable node 0 is reported before any rank starts.
std::shared_ptr<c10d::Store> reach_store(const NodePlacement& nodes, int world, int first_rank) {
  parallel::WorldInfo w;
  w.rank = first_rank;
  w.world_size = world;
  w.master_addr = nodes.master_addr;
  w.master_port = nodes.master_port;
  w.agent_hosts_store = true;  // never host: node 0's launcher does
  try {
    return parallel::connect_store(w, std::chrono::seconds(300));
  } catch (const util::Error& e) {
    throw util::Error(fmt::format("node {} of {}: {}", nodes.node_rank, nodes.nnodes, e.problem()),
                      "start node 0's `halo launch` too, with the same --master-addr/--master-port; check that "
                      "the port is open in node 0's firewall");
  }
}

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Once per run (`warned`): a mismatched build would repeat it on every line.
void warn_malformed(int rank, const protocol::MalformedEvent& bad, bool& warned) {
  if (warned) return;
  warned = true;
  std::fprintf(stderr, "halo: warning: rank %d: %s (kept in events.jsonl as written)\n", rank, bad.problem.c_str());
}

// What a rank's process is doing, from /proc/<pid>/stat's state letter.
std::string process_state(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');  // the command may hold spaces and parentheses
  const char state = paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
  switch (state) {
    case 'T':
    case 't':
      return fmt::format("its process (pid {}) is stopped (SIGSTOP or a debugger)", pid);
    case 'D':
      return fmt::format("its process (pid {}) is stuck in uninterruptible I/O (state D)", pid);
    case '?':
      return fmt::format("its process (pid {}) is gone", pid);
    default:
      return fmt::format("its process (pid {}) is alive but writes nothing (state {})", pid, state);
  }
}

// Silence watch: every rank writes a heartbeat every few seconds (a thread of the worker), so
// one silent for HALO_SILENCE_S seconds after its first line is stopped or frozen (a rank
// that never starts is the join timeout's). Returns the silent rank's local index and the failure.
std::optional<std::pair<int, std::string>> silent_rank(
    const std::vector<std::optional<clock_type::time_point>>& last_line, const RankLineReader& reader,
    const RankSpawner& ranks, int first_rank, std::chrono::seconds limit) {
  const auto now = clock_type::now();
  for (size_t k = 0; k < last_line.size(); ++k) {
    const int local = static_cast<int>(k);
    if (!last_line[k] || !reader.open(local) || now - *last_line[k] < limit) continue;  // watched from its first line
    return std::pair{local, fmt::format("rank {} is silent: no heartbeat for {} s; {}\n  hint: the other ranks "
                                        "were waiting for it; it was killed (a stopped process ignores SIGTERM). "
                                        "HALO_SILENCE_S sets how long a rank may be silent",
                                        first_rank + local, limit.count(), process_state(ranks.pid(local)))};
  }
  return std::nullopt;
}

// Until every rank has exited: their lines recorded, the first rank's steps reported, all
// stopped when one fails or the user presses Ctrl-C.
void supervise(const LaunchOptions& o, const config::ExperimentConfig& cfg, RankSpawner& ranks, int first_rank,
               int nlocal, RunRecorder& recorder, LaunchResult& res) {
  RankStopper stopper([&ranks](int signal) { ranks.kill_all(signal); }, std::chrono::seconds(o.kill_grace_s));
  std::vector<int> fds;
  for (int r = 0; r < nlocal; ++r) fds.push_back(ranks.stdout_fd(r));
  RankLineReader reader(std::move(fds));
  const auto t0 = clock_type::now();
  const std::chrono::seconds silence(silence_limit_s());
  std::vector<std::optional<clock_type::time_point>> last_line(static_cast<size_t>(nlocal));
  bool warned = false;
  auto on_line = [&](int local, const std::string& text) {
    const int rank = first_rank + local;
    last_line[static_cast<size_t>(local)] = clock_type::now();
    const protocol::EventLine line = recorder.record(rank, text);
    if (const auto* bad = std::get_if<protocol::MalformedEvent>(&line.event)) warn_malformed(rank, *bad, warned);
    const auto* step = std::get_if<protocol::StepEvent>(&line.event);
    if (step == nullptr || rank != first_rank) return;
    res.steps = step->step + 1;
    res.last_loss = step->loss();
    if (o.on_step) o.on_step({*step, cfg.schedule.steps, seconds_since(t0)});
  };
  // A rank that lost a peer fails a moment before the launcher sees the peer's exit: the others
  // are stopped once a rank fails of its own, or when kPeerWait has passed without one.
  std::optional<clock_type::time_point> stop_at;
  for (int running = nlocal; running > 0;) {
    reader.poll(std::chrono::milliseconds(100), on_line);
    for (const RankExit& e : ranks.poll_exits()) {
      --running;
      reader.drain(e.rank, std::chrono::seconds(1), on_line);  // its last lines (an error event) come first
      if (e.code != 0 && !stopper.stopping()) {
        recorder.rank_failed(first_rank + e.rank, e.code, e.signaled, e.log_path, ranks.log_tail(e.rank, 15));
        const auto now = clock_type::now();
        stop_at = recorder.cause_known() ? now : std::min(stop_at.value_or(now + kPeerWait), now + kPeerWait);
      }
    }
    if (stop_at && clock_type::now() >= *stop_at && !stopper.stopping()) stopper.stop();
    if (!stopper.stopping())
      if (const auto silent = silent_rank(last_line, reader, ranks, first_rank, silence)) {
        recorder.rank_silent(silent->second);
        ::kill(ranks.pid(silent->first), SIGKILL);  // stopped or frozen: SIGTERM would wait out the grace
        stopper.stop();
      }
    if (recorder.write_failed() && !stopper.stopping()) stopper.stop();  // a run that cannot be kept stops
    if (g_interrupted && !stopper.stopping()) {
      recorder.interrupted(stopped_by(g_interrupted));
      stopper.stop();
    }
    stopper.tick();
    recorder.tick();
  }
  // Every rank has exited: what is still in the pipes (their last lines) ends with EOF.
  for (const auto until = clock_type::now() + std::chrono::seconds(2);
       reader.open_count() > 0 && clock_type::now() < until;)
    reader.poll(std::chrono::milliseconds(100), on_line);
}

// After a failed run: which checkpoint a resume would continue from, or that there is none.
std::string checkpoint_note(const fs::path& run_dir) {
  std::vector<std::string> warnings;
  if (list_checkpoints(run_dir.string(), warnings).empty()) return "no checkpoint was saved: the run cannot be resumed";
  try {
    const ResumePoint p = find_resume_point(run_dir.string());
    return fmt::format("the latest intact checkpoint is {} (step {}): `halo launch --resume {}` continues from it",
                       p.path, p.step, run_dir.string());
  } catch (const util::Error& e) {
    return fmt::format("no checkpoint is intact ({}): the run cannot be resumed", e.problem());
  }
}

// config.json of the run folder, written whole or not at all (a full disk is an error naming it).
void write_run_config(const fs::path& run_dir, const config::ExperimentConfig& cfg) {
  io::AtomicFile file((run_dir / "config.json").string());
  const std::string text = config::to_json(cfg).dump(2) + "\n";
  file.write(text.data(), text.size());
  file.commit();
}

}  // namespace

LaunchResult run_launch(const LaunchOptions& o) {
  LaunchResult res;
  auto [cfg, run_dir, resume_from] = load_run(o);
  const NodePlacement& nodes = o.nodes;
  const int nlocal = check_before_launch(cfg, o.nproc, nodes);
  if (resume_from.empty()) check_pretrained(cfg);  // a resumed run takes its checkpoint's weights
  warn_thread_budget(cfg, nlocal);
  if (auto w = memory::fit_warning(cfg, o.resume_dir.empty() ? o.experiment : (run_dir / "config.json").string()))
    std::fprintf(stderr, "halo: warning: %s\n", w->c_str());
  const int first_rank = nodes.node_rank * nlocal;
  if (nodes.node_rank > 0) run_dir /= fmt::format("node{}", nodes.node_rank);
  const std::string db_path = store::HistoryDb::resolve_path(o.db_path);
  if (nodes.node_rank == 0)
    store::HistoryDb::check_file(db_path, store::HistoryDb::Mode::Write);  // before the folder exists
  fs::create_directories(run_dir);
  res.run_dir = run_dir.string();
  struct LockGuard {
    int fd;
    ~LockGuard() { ::close(fd); }
  } lock_guard{lock_run_folder(run_dir)};
  if (resume_from.empty()) refuse_folder_with_a_run(run_dir);  // after the lock: a live launcher is named first
  // Run history, opened once the folder is ours: node 0's launcher is its only writer.
  std::optional<store::HistoryDb> history;
  if (nodes.node_rank == 0) history.emplace(db_path, store::HistoryDb::Mode::Write);
  write_run_config(run_dir, cfg);
  const int64_t run_id = history ? history->begin_run(config::to_json(cfg), run_dir.string()) : 0;
  if (history && resume_from.empty() && !cfg.model.pretrained.empty())
    history->record_artifact(run_id, "pretrained", cfg.model.pretrained, std::nullopt);  // path, bytes, SHA-256

  const int world = cfg.world_size();
  std::unique_ptr<parallel::LocalStoreServer> server;
  std::shared_ptr<c10d::Store> client;  // node R > 0: node 0's store must be reachable before ranks start
  if (nodes.node_rank == 0)
    server = start_store(nodes.master_port, world, nodes.multi_node());
  else
    client = reach_store(nodes, world, first_rank);
  const uint16_t port = server ? server->port() : nodes.master_port;
  std::vector<std::string> args{"worker", "--run-dir", run_dir.string()};
  if (!resume_from.empty()) args.insert(args.end(), {"--resume", resume_from});
  std::map<std::string, std::string> env{{"HALO_AGENT_STORE", "1"},
                                         {"HALO_LAUNCHER_PID", std::to_string(::getpid())},
                                         {"OMP_NUM_THREADS", std::to_string(cfg.parallel.threads_per_rank)}};
  // CUDA's caching allocator in growable segments unless the user chose: a step's reserved
  // memory then stays near its peak (fixed segments reserved up to 1.7x it on ConvNeXt-XL).
  if (cfg.parallel.device == config::Device::Cuda && !std::getenv("PYTORCH_CUDA_ALLOC_CONF"))
    env.emplace("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
  RankSpawner ranks(self_executable(), args, env, run_dir.string(), /*capture_stdout=*/true);
  g_interrupted = 0;
  // SIGTERM (timeout, scancel, docker stop) stops the run as Ctrl-C does.
  auto old_int = std::signal(SIGINT, on_stop_signal);
  auto old_term = std::signal(SIGTERM, on_stop_signal);
  ranks.start_node(world, port, nodes.multi_node() ? nodes.master_addr : "127.0.0.1", first_rank, nlocal);
  if (nodes.multi_node())
    std::fprintf(stderr, "halo: node %d of %d: ranks %d..%d, store %s:%u%s\n", nodes.node_rank, nodes.nnodes,
                 first_rank, first_rank + nlocal - 1, nodes.master_addr.c_str(), port,
                 nodes.node_rank == 0 ? " (hosted here, listening on all interfaces)" : "");
  std::fprintf(stderr, "halo: run %s: %d rank(s), %s, %s, sp=%d dp=%d%s\n", run_dir.c_str(), world,
               cfg.model.arch.c_str(), config::name_of(cfg.parallel.strategy).c_str(), cfg.parallel.sp, cfg.parallel.dp,
               resume_from.empty() ? "" : (" resuming from " + resume_from).c_str());

  RunRecorder recorder(run_dir, history ? &*history : nullptr, run_id);
  supervise(o, cfg, ranks, first_rank, nlocal, recorder, res);
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  const bool failed = !recorder.failure().empty() && !g_interrupted;
  const std::string note = failed && nodes.node_rank == 0 ? checkpoint_note(run_dir) : "";  // node 0 keeps them
  res.failure = recorder.failure();
  if (!note.empty()) res.failure += "\n  " + note;
  res.exit_code = res.failure.empty() ? 0 : (g_interrupted ? 128 + g_interrupted : 1);
  recorder.finish(g_interrupted != 0, note);
  return res;
}

}  // namespace halo::launch
