// `halo bench step EXPERIMENT.json [--vs timm]`: Halo's training step timed through the launcher
// (its own rank processes) and, with --vs timm, the same step in timm, the two alternating.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "train/StepProfiler.h"

namespace halo::launch {

struct StepBenchOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  int steps = 4;   // per round and side; the first of each is a warm-up
  int rounds = 3;  // Halo, then timm, alternately
  bool vs_timm = false;
  std::string python;    // the peer's interpreter; empty: $HALO_PYTHON, else the build's .venv
  bool profile = false;  // the last round profiles its second step on each side (per-op self time)
};

struct StepPhasesMs {
  double forward = 0, backward = 0, optim = 0, total = 0;
};

struct StepBenchSide {
  std::string name;                           // "halo" or "timm"
  std::vector<double> rounds_ms;              // each round's median step
  StepPhasesMs best;                          // the fastest round's median phases
  std::optional<train::StepProfile> profile;  // with StepBenchOptions::profile (Halo: rank 0)
};

struct StepBenchResult {
  std::string arch, precision;
  int64_t images = 0, height = 0, width = 0;  // one step's input: (images, 3, height, width)
  int sp = 1, threads = 1;
  bool checkpoint = false;
  StepBenchSide halo;
  std::optional<StepBenchSide> timm;
  std::string peer;  // "torch 2.11.0, timm 1.0.x" when compared
  double ratio = 0;  // halo.best.total / timm->best.total
};

// `progress` gets a line per finished round. util::Error for a bad experiment, a failed run, or
// --vs timm without timm in the interpreter (checked before anything runs).
StepBenchResult run_step_bench(const StepBenchOptions& o, const std::function<void(const std::string&)>& progress);

}  // namespace halo::launch
