// What the history holds about a run, as `halo runs` and the workbench read it: the run
// row, and the small records hung off it (metrics, samples, events, artifacts, notes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace halo::store {

enum class RunStatus { Scheduled, Running, Finished, Failed, Killed, Interrupted };
std::string to_string(RunStatus s);                               // "FINISHED"
std::optional<RunStatus> parse_run_status(const std::string& s);  // case-insensitive

struct RunRecord {
  int64_t id = 0;
  std::string name, config, strategy, devices, exit_reason, host, halo_version, git_revision, run_dir;
  int sp = 1, dp = 1;
  RunStatus status = RunStatus::Scheduled;
  std::optional<double> start_time, end_time;  // Unix seconds
  std::optional<int64_t> last_step, launcher_pid;
  std::vector<std::string> tags;
  int64_t steps() const { return last_step ? *last_step + 1 : 0; }  // steps reached
};

struct MetricPoint {
  int64_t step = 0;
  std::string key;
  std::optional<double> value;  // nullopt: the step logged NaN
};

struct MetricSummary {
  std::string key;
  int64_t points = 0, nans = 0;
  std::optional<double> best, last;  // best = smallest finite value
  std::optional<int64_t> best_step, last_step;
};

struct RankPeak {
  int rank = 0;
  int64_t peak = 0, reserved = 0, rss = 0;
  double mean_step_ms = 0;
};

// The figures the workbench's runs table shows beside each run.
struct RunSummary {
  std::optional<double> final_loss;    // rank 0's "loss" at its last logged step
  std::optional<double> best_score;    // largest eval/OLS
  std::optional<int64_t> peak_bytes;   // largest memory peak of any rank
  std::optional<double> mean_step_ms;  // rank 0
};

struct EventRecord {
  std::optional<int> rank;
  std::string kind, json;
  double time = 0;
};

struct ArtifactRecord {
  std::string kind, path, sha256;
  std::optional<int64_t> step, bytes;
};

struct NoteRecord {
  double time = 0;
  std::string text;
};

}  // namespace halo::store
