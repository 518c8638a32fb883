// Where `halo launch --resume` continues: the highest-step checkpoint of the run folder that
// loads as a Halo checkpoint, falling back past damaged ones with a warning for each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/ExperimentConfig.h"

namespace halo::launch {

struct ResumePoint {
  std::string path;
  int64_t step = 0;                   // steps trained (meta/step)
  nlohmann::json config;              // the experiment it was trained with (meta/config)
  std::vector<std::string> warnings;  // damaged checkpoints passed over, newest first; temporaries removed
};

struct CheckpointFile {
  std::string path;
  int64_t step = 0;
};

// <run_dir>/checkpoints/step-<N>.pt, highest N first (by number: step-1000002.pt comes before
// step-999999.pt); other names are ignored; the temporaries of killed checkpoint writes
// (".step-<N>.pt.tmp-*") are removed, a line in `warnings` for each.
std::vector<CheckpointFile> list_checkpoints(const std::string& run_dir, std::vector<std::string>& warnings);

// Loads checkpoints/step-<N>.pt from the highest N down (as data only, io::load_torch_archive)
// until one is complete and its meta/step matches its name; other names are ignored, and the
// temporaries of killed checkpoint writes are removed (each with a warning). util::Error
// naming the folder when it has no checkpoint, or when every one is damaged (each named with why).
ResumePoint find_resume_point(const std::string& run_dir);

// A resume, decided before anything is written: the run folder's config.json with the
// overrides, compared setting by setting with the experiment the checkpoint was trained with
// (config::resume_changes). util::Error listing every refused change (with what may change),
// or when the checkpoint is already at schedule.steps (with the --set that trains further).
struct ResumePlan {
  config::ExperimentConfig cfg;
  ResumePoint point;
  std::vector<std::string> notes;  // allowed changes that alter the run (layout, global batch)
};
ResumePlan plan_resume(const std::string& run_dir, const std::vector<std::string>& overrides);

}  // namespace halo::launch
