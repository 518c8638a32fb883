// Starts one process per rank with torchrun's environment (posix_spawn, argv as given:
// no shell ever sees user strings), watches them, and stops all when one fails.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace halo::launch {

struct RankExit {
  int rank = 0;
  int code = 0;  // exit status, or 128+signal
  bool signaled = false;
  std::string log_path;
};

class RankSpawner {
 public:
  // exe/argv: the program for every rank; env_extra: added to this process's environment.
  // Each rank's stdout+stderr go to <log_dir>/rank<k>.log; with capture_stdout, stdout
  // goes to a pipe instead (stdout_fd(rank)) and only stderr to the log.
  RankSpawner(std::string exe, std::vector<std::string> argv, std::map<std::string, std::string> env_extra,
              std::string log_dir, bool capture_stdout = false);
  int stdout_fd(int rank) const { return out_fds_.at(static_cast<size_t>(rank)); }
  pid_t pid(int rank) const { return pids_.at(static_cast<size_t>(rank)); }
  // Non-blocking: exits collected since the last call.
  std::vector<RankExit> poll_exits();
  ~RankSpawner();  // kills whatever still runs

  // MASTER_ADDR=127.0.0.1, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK per rank.
  void start(int world_size, uint16_t master_port) { start_node(world_size, master_port, "127.0.0.1", 0, world_size); }
  // One node's share of a run: local ranks 0..count-1 are global ranks first_rank + k
  // (LOCAL_RANK=k); their logs are rank<global>.log. Indices below (stdout_fd, pid,
  // RankExit::rank, log_tail) are local.
  void start_node(int world_size, uint16_t master_port, const std::string& master_addr, int first_rank, int count);
  // Waits for all; if one fails, the rest get SIGTERM, then SIGKILL after `grace`.
  // Returns every rank's exit. Throws util::Error when `timeout` passes.
  std::vector<RankExit> wait_all(std::chrono::seconds timeout, std::chrono::seconds grace = std::chrono::seconds(5));
  void kill_all(int signal);
  // Last `lines` lines of a rank's log (for error messages).
  std::string log_tail(int rank, int lines = 20) const;

 private:
  std::string exe_;
  std::vector<std::string> argv_;
  std::map<std::string, std::string> env_;
  std::string log_dir_;
  std::vector<pid_t> pids_;
  std::vector<int> out_fds_;
  bool capture_ = false;
  int first_rank_ = 0;
};

// Path of the running executable (/proc/self/exe).
std::string self_executable();

}  // namespace halo::launch
