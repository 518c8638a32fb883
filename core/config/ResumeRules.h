// What may change when a run is resumed with another experiment (--set on --resume, or an
// edited config.json) and what may not: one rule per setting, read by the launcher and docs.
#pragma once

#include <string>
#include <vector>

#include "config/ExperimentConfig.h"

namespace halo::config {

// One setting that differs between the experiment a checkpoint was trained with and the one
// it is resumed with. allowed: the run goes on (note says what that means, may be empty).
struct ResumeChange {
  std::string field, before, after;
  bool allowed = false;
  std::string note;  // allowed: what changes for the run; refused: why, and what to do
};

// Every differing setting, sorted by field, each with its rule.
std::vector<ResumeChange> resume_changes(const ExperimentConfig& trained, const ExperimentConfig& resumed);

// The settings that may change on resume, for hints: "optim.lr, schedule.*, ...".
std::string resumable_settings();

}  // namespace halo::config
