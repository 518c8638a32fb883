// popen of the halo binary (test-only; the product never builds a shell command), JSON
// experiment files and event parsing for the launch tests.
#include "RunHelpers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

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

}  // namespace halo::testing
