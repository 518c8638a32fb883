// Event loop: poll() the ranks' stdout pipes, tag each JSON line with its rank, append it
// to <run>/events.jsonl, print a progress line from rank 0's steps, watch exits.
#include "launch/Launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/ExperimentConfig.h"
#include "launch/RankSpawner.h"
#include "memory/DeviceCapacity.h"
#include "model/ConvNeXt.h"
#include "parallel/Rendezvous.h"
#include "shard/ShardingCheck.h"
#include "store/HistoryDb.h"
#include "util/Error.h"

namespace halo::launch {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

std::atomic<int> g_interrupted{0};
void on_sigint(int) { g_interrupted = 1; }

std::string timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

std::optional<std::string> latest_checkpoint(const fs::path& run_dir) {
  std::optional<std::string> best;
  if (!fs::exists(run_dir / "checkpoints")) return best;
  for (const auto& e : fs::directory_iterator(run_dir / "checkpoints")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step-", 0) == 0 && e.path().extension() == ".pt" && (!best || e.path().string() > *best))
      best = e.path().string();
  }
  return best;
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
  auto variant = arch::find_convnext_variant(cfg.model.arch);
  if (variant) shard::check_shardable(arch::convnext_layers(*variant).windows(), cfg.data.width, cfg.parallel.sp);
  return nodes.multi_node() && nproc == 0 ? world / nodes.nnodes : (nproc > 0 ? nproc : world);
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

}  // namespace

LaunchResult run_launch(const LaunchOptions& o) {
  LaunchResult res;
  config::ExperimentConfig cfg;
  std::string resume_from;
  fs::path run_dir;
  if (!o.resume_dir.empty()) {
    run_dir = o.resume_dir;
    cfg = config::load_experiment((run_dir / "config.json").string(), o.overrides);
    auto ckpt = latest_checkpoint(run_dir);
    if (!ckpt)
      throw util::Error(fmt::format("run folder {} has no checkpoint to resume from", run_dir.string()),
                        "set train.checkpoint_every in the experiment so runs can be resumed");
    resume_from = *ckpt;
  } else {
    std::vector<std::string> warnings;
    cfg = config::load_experiment(o.experiment, o.overrides, &warnings);
    for (const auto& w : warnings) std::fprintf(stderr, "halo: warning: %s\n", w.c_str());
    run_dir = cfg.run_dir.empty() ? fs::path(o.runs_root) / fmt::format("{}-{}", cfg.name, timestamp())
                                  : fs::path(cfg.run_dir);
  }
  const NodePlacement& nodes = o.nodes;
  const int nlocal = check_before_launch(cfg, o.nproc, nodes);
  if (auto w = memory::fit_warning(cfg, o.resume_dir.empty() ? o.experiment : (run_dir / "config.json").string()))
    std::fprintf(stderr, "halo: warning: %s\n", w->c_str());
  const int first_rank = nodes.node_rank * nlocal;
  if (nodes.node_rank > 0) run_dir /= fmt::format("node{}", nodes.node_rank);
  const std::string db_path = store::HistoryDb::resolve_path(o.db_path);
  if (nodes.node_rank == 0)
    store::HistoryDb::check_file(db_path, store::HistoryDb::Mode::Write);  // before the folder exists
  fs::create_directories(run_dir);
  res.run_dir = run_dir.string();
  // One launcher per run folder: the lock comes first, so a second launcher is refused for
  // that reason and never touches the history.
  const int lock_fd = ::open((run_dir / ".launcher.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0)
    throw util::Error(fmt::format("another launcher is using run folder {}", run_dir.string()),
                      "wait for it to finish, or start a new run");
  struct LockGuard {
    int fd;
    ~LockGuard() { ::close(fd); }
  } lock_guard{lock_fd};
  // Run history, opened once the folder is ours: node 0's launcher is its only writer.
  std::optional<store::HistoryDb> history;
  if (nodes.node_rank == 0) history.emplace(db_path, store::HistoryDb::Mode::Write);
  { std::ofstream(run_dir / "config.json") << config::to_json(cfg).dump(2) << "\n"; }
  const int64_t run_id = history ? history->begin_run(config::to_json(cfg), run_dir.string()) : 0;

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
  RankSpawner ranks(self_executable(), args,
                    {{"HALO_AGENT_STORE", "1"},
                     {"HALO_LAUNCHER_PID", std::to_string(::getpid())},
                     {"OMP_NUM_THREADS", std::to_string(cfg.parallel.threads_per_rank)}},
                    run_dir.string(), /*capture_stdout=*/true);
  g_interrupted = 0;
  auto old_handler = std::signal(SIGINT, on_sigint);
  ranks.start_node(world, port, nodes.multi_node() ? nodes.master_addr : "127.0.0.1", first_rank, nlocal);
  if (nodes.multi_node())
    std::fprintf(stderr, "halo: node %d of %d: ranks %d..%d, store %s:%u%s\n", nodes.node_rank, nodes.nnodes,
                 first_rank, first_rank + nlocal - 1, nodes.master_addr.c_str(), port,
                 nodes.node_rank == 0 ? " (hosted here, listening on all interfaces)" : "");
  std::fprintf(stderr, "halo: run %s: %d rank(s), %s, %s, sp=%d dp=%d%s\n", run_dir.c_str(), world,
               cfg.model.arch.c_str(), config::name_of(cfg.parallel.strategy).c_str(), cfg.parallel.sp, cfg.parallel.dp,
               resume_from.empty() ? "" : (" resuming from " + resume_from).c_str());

  std::ofstream events(run_dir / "events.jsonl", std::ios::app);
  std::vector<std::string> partial(static_cast<size_t>(nlocal));
  std::vector<bool> open(static_cast<size_t>(nlocal), true);
  int running = nlocal;
  std::optional<clock_type::time_point> kill_at;
  std::string failure;
  const auto t0 = clock_type::now();
  int64_t first_step = -1;
  const bool tty = ::isatty(2);
  auto handle_line = [&](int rank, const std::string& line) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) j = {{"event", "log"}, {"text", line}};
    j["rank"] = rank;
    j["time"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    events << j.dump() << "\n";
    events.flush();
    if (history) history->record_event(run_id, rank, j);
    const std::string ev = j.value("event", "");
    if (ev == "error" && failure.empty())
      failure = fmt::format("rank {}: {}{}", rank, j.value("message", ""),
                            j.value("hint", "").empty() ? "" : "\n  hint: " + j.value("hint", ""));
    if (ev == "step" && rank == first_rank) {
      const int64_t step = j["step"].get<int64_t>();
      if (first_step < 0) first_step = step;
      res.steps = step + 1;
      res.last_loss = j["losses"].value("loss", 0.0);
      const double elapsed = std::chrono::duration<double>(clock_type::now() - t0).count();
      const double rate = static_cast<double>(step - first_step + 1) / std::max(elapsed, 1e-9);
      if (o.progress) {
        const std::string msg = fmt::format(
            "step {}/{}  loss {:.4f}  {:.2f} it/s  ETA {}  peak {}", step + 1, cfg.schedule.steps, res.last_loss, rate,
            eta(static_cast<double>(cfg.schedule.steps - step - 1) / std::max(rate, 1e-9)),
            human_bytes(j["memory"].value("peak", 0.0)));
        std::fprintf(stderr, tty ? "\r%-100s" : "%s\n", msg.c_str());
      }
    }
  };
  while (running > 0) {
    std::vector<pollfd> fds;
    std::vector<int> who;
    for (int r = 0; r < nlocal; ++r)
      if (open[static_cast<size_t>(r)]) {
        fds.push_back({ranks.stdout_fd(r), POLLIN, 0});
        who.push_back(r);
      }
    if (!fds.empty())
      ::poll(fds.data(), fds.size(), 100);
    else
      ::usleep(100000);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      auto& acc = partial[static_cast<size_t>(who[i])];
      if (n <= 0) {
        open[static_cast<size_t>(who[i])] = false;
        if (!acc.empty()) handle_line(first_rank + who[i], acc), acc.clear();
        continue;
      }
      acc.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = acc.find('\n')) != std::string::npos;) {
        handle_line(first_rank + who[i], acc.substr(0, nl));
        acc.erase(0, nl + 1);
      }
    }
    for (const RankExit& e : ranks.poll_exits()) {
      --running;
      if (e.code != 0 && !kill_at) {
        if (failure.empty()) failure = fmt::format("rank {} exited with code {}", first_rank + e.rank, e.code);
        failure +=
            fmt::format("\n  rank {} log ({}):\n{}", first_rank + e.rank, e.log_path, ranks.log_tail(e.rank, 15));
        ranks.kill_all(SIGTERM);
        kill_at = clock_type::now() + std::chrono::seconds(o.kill_grace_s);
      }
    }
    if (g_interrupted && !kill_at) {
      failure = "stopped by the user (Ctrl-C)";
      ranks.kill_all(SIGTERM);
      kill_at = clock_type::now() + std::chrono::seconds(o.kill_grace_s);
    }
    if (kill_at && clock_type::now() > *kill_at) ranks.kill_all(SIGKILL);
    if (history) history->tick();
  }
  std::signal(SIGINT, old_handler);
  if (o.progress && tty) std::fprintf(stderr, "\n");
  res.failure = failure;
  res.exit_code = failure.empty() ? 0 : (g_interrupted ? 130 : 1);
  if (history)
    history->finish_run(run_id,
                        failure.empty() ? store::RunStatus::Finished
                                        : (g_interrupted ? store::RunStatus::Killed : store::RunStatus::Failed),
                        failure);
  return res;
}

}  // namespace halo::launch
