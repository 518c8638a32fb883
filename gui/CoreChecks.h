// What the workbench asks of core before a run: the launcher's checks, the device list,
// the memory planner's prediction (core's LibTorch-free shard, arch and memory modules).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/ExperimentConfig.h"
#include "memory/MemoryPlanner.h"

namespace halo::gui {

class CoreChecks {
 public:
  // Everything `halo launch` would refuse beyond the config's own problems, all at once: a
  // width that cannot be sharded over sp (with the nearest widths that can), a data folder
  // that does not exist, no CUDA device; checks whose fields are in `bad_fields` (config
  // problems already reported) are skipped. Empty when it would start.
  static std::vector<std::string> before_launch(const config::ExperimentConfig& cfg,
                                                const std::set<std::string>& bad_fields = {});
  static int cuda_devices();
  static std::string devices_text(const config::ExperimentConfig& cfg);  // "2 CPU ranks (16 cores)" / "GPUs: 0, 1"
  static std::string variant_names();                                    // "convnext_atto, convnext_femto, ..."

  // memory::predict for a config: per-rank memory and step time ("" / nullopt when the
  // planner cannot predict it, e.g. an architecture it does not know).
  static std::string prediction_text(const config::ExperimentConfig& cfg);
  static std::optional<memory::Prediction> predict(const config::ExperimentConfig& cfg);
  static std::optional<double> predicted_peak_bytes(const config::ExperimentConfig& cfg);  // worst rank
  static std::optional<double> predicted_step_ms(const config::ExperimentConfig& cfg);
  // Bytes one rank may use: the GPU's memory, or the RAM shared by the run's CPU ranks.
  static std::optional<double> device_limit_bytes(const config::ExperimentConfig& cfg);
};

}  // namespace halo::gui
