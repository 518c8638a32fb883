// popen of the halo binary (test-only; the product never builds a shell command), JSON
// experiment files and event parsing for the launch tests.
#include "RunHelpers.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

namespace halo::testing {

namespace fs = std::filesystem;

CliResult run_halo(const std::string& args) { return run_command(std::string(HALO_CLI) + " " + args); }

CliResult run_command(const std::string& command_line) {
  const std::string cmd = command_line + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  CliResult r;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string fresh_dir(const std::string& tag) {
  static int n = 0;
  fs::path d =
      fs::temp_directory_path() / ("halo-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::string write_experiment(const std::string& dir, const nlohmann::json& patch) {
  nlohmann::json j = {
      {"name", "test"},
      {"task", "convnext"},
      {"run_dir", dir + "/run"},
      {"model", {{"arch", "convnext_test"}, {"num_classes", 4}}},
      {"data", {{"source", "synthetic"}, {"views", 2}, {"height", 32}, {"width", 128}, {"batch", 2}}},
      {"parallel", {{"strategy", "tp"}, {"sp", 2}, {"dp", 1}}},
      {"optim", {{"name", "adamw"}, {"lr", 0.002}}},
      {"schedule", {{"steps", 5}, {"warmup_steps", 1}}},
      {"train", {{"seed", 3}}},
  };
  if (patch.is_object()) j.merge_patch(patch);
  const std::string path = dir + "/experiment.json";
  std::ofstream(path) << j.dump(2);
  return path;
}

std::vector<nlohmann::json> read_events(const std::string& run_dir, const std::string& event, int rank) {
  std::vector<nlohmann::json> out;
  std::ifstream in(run_dir + "/events.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || j.value("event", "") != event) continue;
    if (rank >= 0 && j.value("rank", -1) != rank) continue;
    out.push_back(j);
  }
  return out;
}

std::vector<double> losses(const std::string& run_dir) {
  std::vector<double> out;
  for (const auto& e : read_events(run_dir, "step")) out.push_back(e["losses"]["loss"].get<double>());
  return out;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::map<std::string, std::string> files_under(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = file_text(e.path().string());
  return out;
}

pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out) ::dup2(::fileno(out), 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

bool wait_for_first_step(const std::string& run_dir, int rank, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (!read_events(run_dir, "step", rank).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace halo::testing
