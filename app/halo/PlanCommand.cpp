// `halo plan EXPERIMENT.json [--budget 24GiB] [--devices 1,2,4,8] [--json]`: predicted peak
// per rank and relative step time of every setup, which fit, and the recommended one.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "Commands.h"
#include "config/ExperimentConfig.h"
#include "launch/CpuRates.h"
#include "memory/StrategyPlanner.h"

namespace halo::app {

namespace {

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
constexpr double MiB = 1024.0 * 1024.0;

nlohmann::json rank_json(const memory::RankPrediction& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : r.layers)
    layers.push_back({{"name", l.name},
                      {"shape", {l.channels, l.height, l.columns}},
                      {"halo", {l.halo_left, l.halo_right}},
                      {"saved_bytes", l.saved + (l.saves_input ? l.in : 0)},
                      {"output_bytes", l.out},
                      {"backward_extra_bytes", l.backward_extra},
                      {"gflops", l.flops / 1e9}});
  return {{"rank", r.rank},
          {"weights", r.weights},
          {"gradients", r.gradients},
          {"optimizer_state", r.optimizer_state},
          {"scaler_and_buffers", r.scaler_and_buffers},
          {"inputs", r.inputs},
          {"saved_activations", r.saved_activations},
          {"backward_transient", r.backward_transient},
          {"comm_buffers", r.comm_buffers},
          {"optimizer_transient", r.optimizer_transient},
          {"activation_peak", r.activation_peak},
          {"gradients_at_peak", r.gradients_at_peak},
          {"peak", r.peak},
          {"allocator_slack", r.allocator_slack},
          {"reserved", r.reserved},
          {"peak_at", r.peak_at},
          {"layers", layers}};
}

void print_detail(const memory::Prediction& p) {
  const memory::RankPrediction& r = p.worst();
  std::printf("%s, %s (%s), sp=%d dp=%d, %s, %s: rank %d of %d\n", p.arch.c_str(), config::name_of(p.strategy).c_str(),
              config::checkpoint_label(p.checkpoint).c_str(), p.sp, p.dp, config::name_of(p.precision).c_str(),
              p.device == memory::DeviceKind::Cuda ? "cuda" : "cpu", r.rank, p.sp);
  std::printf("  %-34s %10s %8s %12s %12s\n", "layer", "out shape", "halo", "saved MiB", "bwd+ MiB");
  for (const auto& l : r.layers)
    std::printf("  %-34s %4ldx%-3ldx%-4ld %3ld+%-3ld %12.1f %12.1f\n", l.name.c_str(), static_cast<long>(l.channels),
                static_cast<long>(l.height), static_cast<long>(l.columns), static_cast<long>(l.halo_left),
                static_cast<long>(l.halo_right), static_cast<double>(l.saved + (l.saves_input ? l.in : 0)) / MiB,
                static_cast<double>(l.backward_extra) / MiB);
  const std::vector<std::pair<const char*, int64_t>> parts{{"weights", r.weights},
                                                           {"gradients held between steps", r.gradients},
                                                           {"gradients made by the peak", r.gradients_at_peak},
                                                           {"optimizer state", r.optimizer_state},
                                                           {"loss scaler + buffers", r.scaler_and_buffers},
                                                           {"input images", r.inputs},
                                                           {"saved activations", r.saved_activations},
                                                           {"backward transient", r.backward_transient},
                                                           {"gradient buckets (world > 1)", r.comm_buffers},
                                                           {"optimizer temporaries", r.optimizer_transient},
                                                           {"predicted peak", r.peak},
                                                           {"allocator slack (CUDA estimate)", r.allocator_slack},
                                                           {"reserved", r.reserved}};
  for (const auto& [name, b] : parts) std::printf("  %-34s %12.1f MiB\n", name, static_cast<double>(b) / MiB);
  std::printf("  peak during %s; step %.3f s estimated (%s)\n\n", r.peak_at.c_str(), p.time.total_s,
              p.rates.source.c_str());
}

}  // namespace

void add_plan_commands(CLI::App& app) {
  struct Args {
    std::string experiment, budget, devices;
    std::vector<std::string> overrides;
    bool json = false, calibrate = false, detail = false;
  };
  auto a = std::make_shared<Args>();
  auto* plan = app.add_subcommand("plan", "Predict memory per rank and step time of every strategy; recommend one");
  plan->add_option("experiment", a->experiment, "EXPERIMENT.json")->required();
  plan->add_option("--budget", a->budget, "memory per rank, e.g. 24GiB (default: 80GiB on cuda, RAM / devices on cpu)");
  plan->add_option("--devices", a->devices,
                   "device counts to plan for, comma-separated (default: the experiment's sp x dp)");
  plan->add_option("--set", a->overrides, "override an experiment field (repeatable)");
  plan->add_flag("--calibrate", a->calibrate, "measure this CPU's matmul and copy rates first (about 1 s)");
  plan->add_flag("--detail", a->detail, "also print the experiment's own setup layer by layer");
  plan->add_flag("--json", a->json, "print JSON");
  plan->callback([a]() {
    const config::ExperimentConfig cfg = config::load_experiment(a->experiment, a->overrides);
    std::vector<int> devices;
    if (a->devices.empty()) devices.push_back(cfg.world_size());
    std::stringstream in(a->devices);
    for (std::string s; std::getline(in, s, ',');) {
      int n = 0;
      try {
        n = std::stoi(s);
      } catch (const std::exception&) {}
      if (n < 1 || n > 1024) throw CLI::ValidationError("--devices", "'" + s + "' is not a device count (1..1024)");
      devices.push_back(n);
    }
    const bool cuda = cfg.parallel.device == config::Device::Cuda;
    if (cuda && a->calibrate)
      throw CLI::ValidationError("--calibrate",
                                 "times this CPU; a cuda experiment is planned with the stored GPU rates");
    int max_devices = 1;
    for (int d : devices) max_devices = std::max(max_devices, d);
    const int64_t budget =
        !a->budget.empty() ? memory::parse_bytes(a->budget)
        : cuda             ? int64_t{80} << 30
                           : static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE) / max_devices;
    const memory::MachineRates rates =
        a->calibrate ? launch::measure_cpu_rates(cfg.parallel.threads_per_rank)
                     : memory::stored_rates(cuda ? memory::DeviceKind::Cuda : memory::DeviceKind::Cpu);
    const memory::PlanResult r = memory::plan_setups(cfg, devices, budget, rates);
    const memory::Prediction own = memory::predict(cfg, rates);
    if (a->json) {
      nlohmann::json j;
      j["experiment"] = a->experiment;
      j["budget_bytes"] = r.budget;
      j["rates"] = {{"flops_per_s", rates.flops_per_s},
                    {"bytes_per_s", rates.bytes_per_s},
                    {"link_bytes_per_s", rates.link_bytes_per_s},
                    {"source", rates.source}};
      for (const auto& row : r.rows)
        j["setups"].push_back({{"devices", row.devices},
                               {"sp", row.sp},
                               {"dp", row.dp},
                               {"strategy", config::name_of(row.strategy)},
                               {"checkpoint_level", config::checkpoint_label(row.checkpoint)},
                               {"shard_state", config::name_of(row.shard_state)},
                               {"label", row.label},
                               {"peak_bytes", row.peak},
                               {"reserved_bytes", row.reserved},
                               {"activation_peak_bytes", row.activation_peak},
                               {"step_s", row.step_s},
                               {"relative_time", row.relative_time},
                               {"fits", row.fits},
                               {"problem", row.problem}});
      for (size_t i : r.fastest_per_devices)
        j["fastest_per_devices"].push_back({{"devices", r.rows[i].devices}, {"label", r.rows[i].label}});
      j["recommended"] = r.recommended ? nlohmann::json(r.rows[*r.recommended].label +
                                                        fmt::format(" on {} device(s)", r.rows[*r.recommended].devices))
                                       : nlohmann::json(nullptr);
      j["experiment_setup"] = {
          {"strategy", config::name_of(own.strategy)}, {"sp", own.sp}, {"dp", own.dp}, {"step_s", own.time.total_s}};
      for (const auto& rank : own.ranks) j["experiment_setup"]["ranks"].push_back(rank_json(rank));
      std::printf("%s\n", j.dump(2).c_str());
      return;
    }
    if (a->detail) print_detail(own);
    std::printf("%s: %s on %ld x (3, %ld, %ld), %s, %s, budget %.2f GiB per rank\n", a->experiment.c_str(),
                cfg.model.arch.c_str(), static_cast<long>(cfg.data.batch * cfg.data.views),
                static_cast<long>(cfg.data.height), static_cast<long>(cfg.data.width),
                config::name_of(cfg.train.precision).c_str(), cuda ? "cuda" : "cpu", static_cast<double>(budget) / GiB);
    std::printf("%7s  %-32s %4s %4s %14s %12s %10s  %s\n", "devices", "setup", "sp", "dp", "peak GiB/rank",
                cuda ? "reserved GiB" : "", "rel. time", "fits");
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const auto& row = r.rows[i];
      if (!row.problem.empty()) {
        std::printf("%7d  %-32s %4d %4d  cannot run: %s\n", row.devices, row.label.c_str(), row.sp, row.dp,
                    row.problem.c_str());
        continue;
      }
      std::printf(
          "%7d  %-32s %4d %4d %14.2f %12s %10.2f  %s%s\n", row.devices, row.label.c_str(), row.sp, row.dp,
          static_cast<double>(row.peak) / GiB,
          cuda ? fmt::format("{:.2f}", static_cast<double>(row.reserved) / GiB).c_str() : "", row.relative_time,
          row.fits ? "yes" : "no",
          r.recommended == i ? "  <- recommended"
          : std::find(r.fastest_per_devices.begin(), r.fastest_per_devices.end(), i) != r.fastest_per_devices.end()
              ? fmt::format("  <- fastest on {}", row.devices).c_str()
              : "");
    }
    if (r.recommended) {
      const auto& best = r.rows[*r.recommended];
      std::printf("\nrecommended: %s on %d device(s): parallel.strategy=%s parallel.sp=%d parallel.dp=%d%s%s\n",
                  best.label.c_str(), best.devices, config::name_of(best.strategy).c_str(), best.sp, best.dp,
                  best.checkpoint ? (" parallel.checkpoint_level=" + config::name_of(*best.checkpoint)).c_str() : "",
                  best.shard_state != config::ShardState::None
                      ? (" parallel.shard_state=" + config::name_of(best.shard_state)).c_str()
                      : "");
    } else {
      std::printf(
          "\nnothing fits in %.2f GiB per rank: add devices (--devices), lower data.height/width or data.batch, "
          "or use bf16\n",
          static_cast<double>(budget) / GiB);
    }
    std::printf("relative time: estimated time per sample over that of `none` on one device (%s)\n",
                rates.source.c_str());
  });
}

}  // namespace halo::app
