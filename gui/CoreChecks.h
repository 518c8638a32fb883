// The launcher's pre-launch checks and the device list, asked of core for the setup form;
// the only gui file that includes LibTorch headers.
#pragma once

#include <string>

#include "train/ExperimentConfig.h"

namespace halo::gui {

class CoreChecks {
 public:
  // What `halo launch` would refuse beyond the config's own problems (a width that cannot
  // be sharded over sp, with the nearest widths that can): "" when it would start.
  static std::string before_launch(const train::ExperimentConfig& cfg);
  static int cuda_devices();
  static std::string devices_text(const train::ExperimentConfig& cfg);  // "2 CPU ranks (16 cores)" / "GPUs: 0, 1"
  static std::string variant_names();  // "convnext_atto, convnext_femto, ..."
};

}  // namespace halo::gui
