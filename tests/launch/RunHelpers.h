// Test helpers for end-to-end runs through the real CLI: write an experiment, run
// `halo launch`, read the run's events.jsonl.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace halo::testing {

struct CliResult {
  int code = 0;
  std::string out;  // stdout + stderr
};

// Runs a shell command line (test-only), capturing stdout + stderr.
CliResult run_command(const std::string& command_line);

// Runs build/bin/halo with arguments (shell-quoted by the caller where needed).
CliResult run_halo(const std::string& args);

// A tiny, fast experiment (convnext_test, 2 views of 32x128, 5 steps) in a fresh temp
// folder; `patch` is merged over it. Returns the path of the experiment file.
std::string write_experiment(const std::string& dir, const nlohmann::json& patch);

// Events of one rank (all ranks when rank < 0) from <run_dir>/events.jsonl.
std::vector<nlohmann::json> read_events(const std::string& run_dir, const std::string& event, int rank = 0);
std::vector<double> losses(const std::string& run_dir);

std::string fresh_dir(const std::string& tag);

// A file's bytes; every regular file under `dir` with its bytes (to check that a refused
// command changed nothing on disk).
std::string file_text(const std::string& path);
std::map<std::string, std::string> files_under(const std::string& dir);

// A process started with argv (argv[0] found on PATH), stdout and stderr into `log`.
pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log);
// Its exit code (128 + signal when killed); -1 after `limit` (then it is SIGKILLed and reaped).
int wait_exit(pid_t pid, std::chrono::milliseconds limit);
// Whether rank `rank` wrote a step event into <run_dir>/events.jsonl within `limit`.
bool wait_for_first_step(const std::string& run_dir, int rank, std::chrono::milliseconds limit);

}  // namespace halo::testing
