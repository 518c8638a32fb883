// Same calls as the launcher's check_before_launch (model windows -> check_shardable),
// messages as the CLI prints them ("problem\n  hint: fix").
#include "CoreChecks.h"

#include <thread>

#include <fmt/format.h>
#include <torch/cuda.h>

#include "model/ConvNeXt.h"
#include "model/ConvNeXtVariant.h"
#include "parallel/ShardingCheck.h"
#include "util/Error.h"

namespace halo::gui {

std::string CoreChecks::before_launch(const train::ExperimentConfig& cfg) {
  const auto variant = model::find_convnext_variant(cfg.model.arch);
  if (!variant) return "";
  try {
    parallel::check_shardable(model::ConvNeXtImpl::layer_windows(*variant), cfg.data.width, cfg.parallel.sp);
  } catch (const util::Error& e) {
    return e.problem() + (e.hint().empty() ? "" : "\n  hint: " + e.hint());
  }
  if (cfg.parallel.device == "cuda") {
    const int n = cuda_devices();
    if (n == 0) return "parallel.device is cuda but this machine has no CUDA device\n  hint: set parallel.device to cpu";
  }
  return "";
}

int CoreChecks::cuda_devices() { return static_cast<int>(torch::cuda::device_count()); }

std::string CoreChecks::devices_text(const train::ExperimentConfig& cfg) {
  const int world = cfg.world_size();
  if (cfg.parallel.device == "cuda") {
    const int n = cuda_devices();
    std::string ids;
    for (int d = 0; d < n; ++d) ids += (d ? ", " : "") + std::to_string(d);
    return n == 0 ? "no CUDA device on this machine"
                  : fmt::format("{} rank(s) on GPUs {} ({} GPU(s) found{})", world, ids, n,
                                world > n ? ", ranks share GPUs" : "");
  }
  return fmt::format("{} CPU rank(s), {} thread(s) each ({} cores here)", world, cfg.parallel.threads_per_rank,
                     std::thread::hardware_concurrency());
}

std::string CoreChecks::variant_names() { return model::convnext_variant_names(); }

}  // namespace halo::gui
