// posix_spawn with explicit argv and envp; logs redirected by file actions. Supervision is
// a waitpid loop: the first failure stops every other rank (RankStopper) within `grace`.
#include "launch/RankSpawner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "launch/RankStopper.h"
#include "util/Error.h"

extern char** environ;

namespace halo::launch {

std::string self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw util::Error("cannot read /proc/self/exe to find the halo executable");
  return std::string(buf, static_cast<size_t>(n));
}

RankSpawner::RankSpawner(std::string exe, std::vector<std::string> argv, std::map<std::string, std::string> env_extra,
                         std::string log_dir, bool capture_stdout)
    : exe_(std::move(exe)),
      argv_(std::move(argv)),
      env_(std::move(env_extra)),
      log_dir_(std::move(log_dir)),
      capture_(capture_stdout) {}

RankSpawner::~RankSpawner() {
  kill_all(SIGKILL);
  for (pid_t p : pids_)
    if (p > 0) ::waitpid(p, nullptr, 0);
  for (int fd : out_fds_)
    if (fd >= 0) ::close(fd);
}

void RankSpawner::start_node(int world_size, uint16_t master_port, const std::string& master_addr, int first_rank,
                             int count) {
  first_rank_ = first_rank;
  for (int r = 0; r < count; ++r) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
      const char* eq = std::strchr(*e, '=');
      if (eq) env[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
    }
    for (const auto& [k, v] : env_) env[k] = v;
    env["MASTER_ADDR"] = master_addr;
    env["MASTER_PORT"] = std::to_string(master_port);
    env["RANK"] = std::to_string(first_rank + r);
    env["WORLD_SIZE"] = std::to_string(world_size);
    env["LOCAL_RANK"] = std::to_string(r);
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp, argv;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string arg0 = exe_;
    argv.push_back(arg0.data());
    std::vector<std::string> args = argv_;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    const std::string log = fmt::format("{}/rank{}.log", log_dir_, first_rank + r);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    int pipe_fds[2] = {-1, -1};
    if (capture_) {
      if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw util::Error(fmt::format("cannot create a pipe for rank {}", r));
      posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], 1);
      posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    } else {
      posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      posix_spawn_file_actions_adddup2(&fa, 1, 2);
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, exe_.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (capture_) {
      ::close(pipe_fds[1]);
      out_fds_.push_back(pipe_fds[0]);
    }
    if (rc != 0) {
      kill_all(SIGKILL);
      throw util::Error(fmt::format("cannot start rank {} ({}): {}", first_rank + r, exe_, std::strerror(rc)));
    }
    pids_.push_back(pid);
  }
}

void RankSpawner::kill_all(int signal) {
  for (pid_t p : pids_)
    if (p > 0) ::kill(p, signal);
}

std::vector<RankExit> RankSpawner::wait_all(std::chrono::seconds timeout, std::chrono::seconds grace) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + timeout;
  RankStopper stopper([this](int signal) { kill_all(signal); }, grace);
  std::vector<RankExit> exits(pids_.size());
  size_t running = pids_.size();
  while (running > 0) {
    const std::vector<RankExit> now = poll_exits();
    for (const RankExit& e : now) {
      exits[static_cast<size_t>(e.rank)] = e;
      --running;
      if (e.code != 0) stopper.stop();
    }
    stopper.tick();
    if (clock::now() > deadline) {
      kill_all(SIGKILL);
      throw util::Error(fmt::format("ranks did not finish within {} s", timeout.count()),
                        "see the rank logs in " + log_dir_);
    }
    if (now.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exits;
}

std::vector<RankExit> RankSpawner::poll_exits() {
  std::vector<RankExit> out;
  for (size_t r = 0; r < pids_.size(); ++r) {
    if (pids_[r] <= 0) continue;
    int status = 0;
    if (::waitpid(pids_[r], &status, WNOHANG) != pids_[r]) continue;
    RankExit e;
    e.rank = static_cast<int>(r);
    e.log_path = fmt::format("{}/rank{}.log", log_dir_, first_rank_ + static_cast<int>(r));
    e.signaled = WIFSIGNALED(status);
    e.code = e.signaled ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    pids_[r] = -1;
    out.push_back(e);
  }
  return out;
}

std::string RankSpawner::log_tail(int rank, int lines) const {
  std::ifstream in(fmt::format("{}/rank{}.log", log_dir_, first_rank_ + rank));
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  std::string out;
  for (const auto& l : tail) out += "    " + l + "\n";
  return out;
}

}  // namespace halo::launch
