// CPU: MemAvailable from /proc/meminfo split over the ranks (they share this host).
// CUDA: cudaGetDeviceProperties of device 0 (no context is created by that query).
#include "memory/DeviceCapacity.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#ifdef HALO_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "memory/MemoryPlanner.h"
#include "util/Error.h"

namespace halo::memory {

int cuda_device_count() {
#ifdef HALO_WITH_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess) return n;
#endif
  return 0;
}

std::optional<DeviceCapacity> device_capacity(const config::ExperimentConfig& cfg) {
  const double GiB = 1024.0 * 1024.0 * 1024.0;
  if (cfg.parallel.device == config::Device::Cuda) {
#ifdef HALO_WITH_CUDA
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
      return DeviceCapacity{static_cast<int64_t>(prop.totalGlobalMem),
                            fmt::format("{}: {:.1f} GiB", prop.name, static_cast<double>(prop.totalGlobalMem) / GiB)};
#endif
    return std::nullopt;
  }
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream in(line);
    std::string key;
    int64_t kib = 0;
    if (in >> key >> kib && key == "MemAvailable:") {
      const int world = std::max(1, cfg.world_size());
      return DeviceCapacity{kib * 1024 / world, fmt::format("MemAvailable {:.1f} GiB / {} rank(s)",
                                                            static_cast<double>(kib) * 1024 / GiB, world)};
    }
  }
  return std::nullopt;
}

std::optional<std::string> fit_warning(const config::ExperimentConfig& cfg, const std::string& experiment) {
  const auto cap = device_capacity(cfg);
  if (!cap) return std::nullopt;
  try {
    const Prediction p = predict(cfg);
    const RankPrediction& r = p.worst();
    if (r.reserved <= cap->bytes_per_rank) return std::nullopt;
    const double GiB = 1024.0 * 1024.0 * 1024.0;
    return fmt::format(
        "predicted peak {:.2f} GiB per rank (rank {}, during {}) does not fit in {}; "
        "`halo plan {} --devices N --budget SIZE` lists setups that fit",
        static_cast<double>(r.reserved) / GiB, r.rank, r.peak_at, cap->what, experiment);
  } catch (const util::Error&) {
    return std::nullopt;  // the launch checks report configuration problems themselves
  }
}

}  // namespace halo::memory
