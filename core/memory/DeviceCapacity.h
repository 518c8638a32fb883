// How much memory one rank of an experiment may use on this machine: the GPU's total
// memory, or the available RAM shared by all ranks of a CPU run. Used to warn before launch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/ExperimentConfig.h"

namespace halo::memory {

struct DeviceCapacity {
  int64_t bytes_per_rank = 0;
  std::string what;  // "MemAvailable 18.2 GiB / 4 ranks", "GPU 0: 79.1 GiB"
};

// GPUs visible to this process (0 on a build or host without CUDA); creates no CUDA context.
int cuda_device_count();

// std::nullopt when it cannot be known here (a CUDA experiment on a build or host without CUDA).
std::optional<DeviceCapacity> device_capacity(const config::ExperimentConfig& cfg);

// The launcher's warning, or std::nullopt when the run is predicted to fit (or cannot be predicted).
std::optional<std::string> fit_warning(const config::ExperimentConfig& cfg,
                                       const std::string& experiment = "EXPERIMENT.json");

}  // namespace halo::memory
