// Same calls as the launcher's check_before_launch (layer list -> check_shardable),
// messages as the CLI prints them ("problem\n  hint: fix").
#include "CoreChecks.h"

#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "arch/Backbones.h"
#include "memory/DeviceCapacity.h"
#include "memory/MemoryPlanner.h"
#include "shard/ShardingCheck.h"
#include "util/Error.h"

namespace halo::gui {

std::vector<std::string> CoreChecks::before_launch(const config::ExperimentConfig& cfg,
                                                   const std::set<std::string>& bad) {
  std::vector<std::string> out;
  const bool shard_fields_ok = !bad.count("model.arch") && !bad.count("data.width") && !bad.count("parallel.sp");
  if (const auto layers = arch::backbone_layers(cfg.model.arch, cfg.model.num_classes); layers && shard_fields_ok) {
    try {
      shard::check_shardable(layers->windows(), cfg.data.width, cfg.parallel.sp);
    } catch (const util::Error& e) {
      out.push_back(e.problem() + (e.hint().empty() ? "" : "\n  hint: " + e.hint()));
    }
  }
  std::error_code ec;
  if (cfg.data.source == config::DataSource::OpenLaneV2 && !cfg.data.root.empty() && !bad.count("data.root") &&
      !std::filesystem::is_directory(cfg.data.root, ec))
    out.push_back(
        fmt::format("data.root: \"{}\": no such folder\n  hint: choose the OpenLane-V2 folder (it holds "
                    "train/ and val/), or use data.source \"synthetic\"",
                    cfg.data.root));
  if (!cfg.model.pretrained.empty() && !bad.count("model.pretrained") &&
      !std::filesystem::is_regular_file(cfg.model.pretrained, ec))
    out.push_back(
        fmt::format("model.pretrained: \"{}\": no such file\n  hint: choose a safetensors or torch.save "
                    "file of timm-named weights, or leave it empty to start from random weights",
                    cfg.model.pretrained));
  if (cfg.parallel.device == config::Device::Cuda && !bad.count("parallel.device") && cuda_devices() == 0)
    out.push_back(
        "parallel.device is cuda but this machine has no CUDA device\n  hint: set parallel.device to cpu "
        "(the prediction and the Planner tab still work for cuda)");
  return out;
}

int CoreChecks::cuda_devices() { return memory::cuda_device_count(); }

std::string CoreChecks::devices_text(const config::ExperimentConfig& cfg) {
  const int world = cfg.world_size();
  if (cfg.parallel.device == config::Device::Cuda) {
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

std::string CoreChecks::variant_names() { return arch::backbone_names(); }

namespace {

std::string gib(int64_t b) {
  const double mib = static_cast<double>(b) / (1024.0 * 1024.0);
  return mib >= 1024 ? fmt::format("{:.2f} GiB", mib / 1024) : fmt::format("{:.1f} MiB", mib);
}

std::optional<memory::Prediction> try_predict(const config::ExperimentConfig& cfg) {
  try {
    return memory::predict(cfg);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<memory::Prediction> CoreChecks::predict(const config::ExperimentConfig& cfg) { return try_predict(cfg); }

std::string CoreChecks::prediction_text(const config::ExperimentConfig& cfg) {
  const auto p = try_predict(cfg);
  if (!p && arch::backbone_family(cfg.model.arch))
    if (const auto why = memory::unplanned(cfg))  // no rules for it yet
      return fmt::format(
          "{}: {:.1f} M parameters\nmemory: {}; launch the run and read each rank's measured memory in the Memory tab",
          cfg.model.arch,
          static_cast<double>(arch::backbone_layers(cfg.model.arch, cfg.model.num_classes)->parameter_count()) / 1e6,
          *why);
  if (!p) return "";
  std::string out = fmt::format("{} {} (sp={} dp={}, {}), {:.1f} M parameters\n", p->arch, config::name_of(p->strategy),
                                p->sp, p->dp, config::name_of(p->precision), static_cast<double>(p->parameters) / 1e6);
  for (const auto& r : p->ranks)
    out += fmt::format(
        "rank {}: peak {}  (weights+optimizer {}, saved activations {}, activation peak {} with {} of gradients){}\n",
        r.rank, gib(r.peak), gib(r.weights + r.gradients + r.optimizer_state), gib(r.saved_activations),
        gib(r.activation_peak), gib(r.gradients_at_peak), r.allocator_slack > 0 ? ", reserved " + gib(r.reserved) : "");
  out += fmt::format("peak at: {}\nstep time (estimate): {:.0f} ms", p->worst().peak_at, p->time.total_s * 1000);
  if (const auto warn = memory::fit_warning(cfg))
    out += "\nwarning: " + *warn;
  else if (const auto cap = memory::device_capacity(cfg))
    out += "\nfits: " + cap->what;
  else if (cfg.parallel.device == config::Device::Cuda)
    out += "\nno CUDA device here to compare with: the Planner tab checks it against a budget";
  return out;
}

std::optional<double> CoreChecks::predicted_peak_bytes(const config::ExperimentConfig& cfg) {
  const auto p = try_predict(cfg);
  return p ? std::optional<double>(static_cast<double>(p->worst().peak)) : std::nullopt;
}

std::optional<double> CoreChecks::predicted_step_ms(const config::ExperimentConfig& cfg) {
  const auto p = try_predict(cfg);
  return p ? std::optional<double>(p->time.total_s * 1000) : std::nullopt;
}

std::optional<double> CoreChecks::device_limit_bytes(const config::ExperimentConfig& cfg) {
  try {
    const auto cap = memory::device_capacity(cfg);
    return cap ? std::optional<double>(static_cast<double>(cap->bytes_per_rank)) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace halo::gui
