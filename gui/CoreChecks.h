// What the workbench asks of core before a run: the launcher's checks, the device list,
// the memory planner's prediction; the only gui file that includes LibTorch headers.
#pragma once

#include <optional>
#include <string>

#include "config/ExperimentConfig.h"

namespace halo::gui {

class CoreChecks {
 public:
  // What `halo launch` would refuse beyond the config's own problems (a width that cannot
  // be sharded over sp, with the nearest widths that can): "" when it would start.
  static std::string before_launch(const config::ExperimentConfig& cfg);
  static int cuda_devices();
  static std::string devices_text(const config::ExperimentConfig& cfg);  // "2 CPU ranks (16 cores)" / "GPUs: 0, 1"
  static std::string variant_names();                                    // "convnext_atto, convnext_femto, ..."

  // memory::predict for a config: per-rank memory and step time ("" / nullopt when the
  // planner cannot predict it, e.g. an architecture it does not know).
  static std::string prediction_text(const config::ExperimentConfig& cfg);
  static std::optional<double> predicted_peak_bytes(const config::ExperimentConfig& cfg);  // worst rank
  static std::optional<double> predicted_step_ms(const config::ExperimentConfig& cfg);
  // Bytes one rank may use: the GPU's memory, or the RAM shared by the run's CPU ranks.
  static std::optional<double> device_limit_bytes(const config::ExperimentConfig& cfg);
};

}  // namespace halo::gui
