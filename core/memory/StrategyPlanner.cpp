// Setups on D devices: sp in the divisors of D, dp = D / sp, checkpointing off or per block
// or per stage, ZeRO off, 1 or 2 (same time but stage 1's extra all-gather, so at equal
// time the smaller peak wins). Ranking is by estimated time per global sample (dp groups run side by side).
#include "memory/StrategyPlanner.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::memory {

int64_t parse_bytes(const std::string& text) {
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  std::string unit;
  for (size_t i = pos; i < text.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(text[i])))
      unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  const std::vector<std::pair<std::string, double>> units{{"", 1},
                                                          {"b", 1},
                                                          {"kib", 1024.0},
                                                          {"mib", 1024.0 * 1024},
                                                          {"gib", 1024.0 * 1024 * 1024},
                                                          {"tib", 1024.0 * 1024 * 1024 * 1024},
                                                          {"kb", 1e3},
                                                          {"mb", 1e6},
                                                          {"gb", 1e9},
                                                          {"tb", 1e12},
                                                          {"k", 1024.0},
                                                          {"m", 1024.0 * 1024},
                                                          {"g", 1024.0 * 1024 * 1024}};
  for (const auto& [u, f] : units)
    if (pos > 0 && unit == u && v > 0) return static_cast<int64_t>(std::llround(v * f));
  throw util::Error(fmt::format("memory size '{}' is not understood", text),
                    "write a positive size such as 24GiB, 80GB or 512MiB");
}

config::ExperimentConfig PlanRow::applied_to(const config::ExperimentConfig& cfg) const {
  config::ExperimentConfig c = cfg;
  c.parallel.sp = sp;
  c.parallel.dp = dp;
  c.parallel.strategy = strategy;
  c.parallel.shard_state = shard_state;
  if (checkpoint) c.parallel.checkpoint_level = *checkpoint;
  return c;
}

namespace {

// ZeRO stages worth listing on d devices (sharding over one rank changes nothing).
std::vector<config::ShardState> shard_states(int devices) {
  if (devices == 1) return {config::ShardState::None};
  return {config::ShardState::None, config::ShardState::Optimizer, config::ShardState::Gradients,
          config::ShardState::Weights};
}

// "none", "checkpoint(block)", "tp4+checkpoint(stage)+zero2".
std::string label_of(int sp, std::optional<config::CheckpointLevel> level, config::ShardState zero) {
  std::string s = (sp > 1 ? fmt::format("tp{}", sp) : std::string(level ? "" : "none")) +
                  (level ? fmt::format("{}checkpoint({})", sp > 1 ? "+" : "", config::name_of(*level)) : "");
  return s + std::string(config::zero_suffix(zero));
}

PlanRow plan_row(const config::ExperimentConfig& cfg, int d, int sp, std::optional<config::CheckpointLevel> level,
                 config::ShardState zero, double base, int64_t budget, const MachineRates& rates) {
  PlanRow row;
  row.devices = d;
  row.sp = sp;
  row.dp = d / sp;
  row.strategy = config::make_strategy(sp > 1, level.has_value());
  row.checkpoint = level;
  row.shard_state = zero;
  row.label = label_of(sp, level, zero);
  try {
    const Prediction p = predict(row.applied_to(cfg), rates);
    const RankPrediction& w = p.worst();
    row.peak = w.peak;
    row.reserved = w.reserved;
    row.activation_peak = w.activation_peak;
    row.step_s = p.time.total_s;
    row.time_per_sample_s = p.time.total_s / static_cast<double>(row.dp * cfg.data.batch);
    row.relative_time = row.time_per_sample_s / base;
    row.fits = w.reserved <= budget;
  } catch (const util::Error& e) {
    row.problem = e.problem();
  }
  return row;
}

}  // namespace

PlanResult plan_setups(const config::ExperimentConfig& cfg, const std::vector<int>& device_counts, int64_t budget,
                       const MachineRates& rates) {
  PlanResult out;
  out.budget = budget;
  out.rates = rates;
  using Level = std::optional<config::CheckpointLevel>;
  auto with = [&](int sp, int dp, Level level) {
    config::ExperimentConfig c = cfg;
    c.parallel.sp = sp;
    c.parallel.dp = dp;
    c.parallel.strategy = config::make_strategy(sp > 1, level.has_value());
    c.parallel.shard_state = config::ShardState::None;
    if (level) c.parallel.checkpoint_level = *level;
    return c;
  };
  const double base = predict(with(1, 1, std::nullopt), rates).time.total_s / static_cast<double>(cfg.data.batch);
  for (int d : device_counts) {
    for (int sp = 1; sp <= d; ++sp) {
      if (d % sp != 0) continue;
      for (const Level level : {Level{}, Level{config::CheckpointLevel::Block}, Level{config::CheckpointLevel::Stage}})
        for (const config::ShardState zero : shard_states(d))
          out.rows.push_back(plan_row(cfg, d, sp, level, zero, base, budget, rates));
    }
  }
  // Fastest fitting row among `rows[i]` for which keep(i); ties go to the smaller peak.
  auto fastest = [&](auto keep) {
    std::optional<size_t> best;
    for (size_t i = 0; i < out.rows.size(); ++i) {
      const PlanRow& r = out.rows[i];
      if (!r.fits || !keep(r)) continue;
      const PlanRow* b = best ? &out.rows[*best] : nullptr;
      if (!b || r.time_per_sample_s < b->time_per_sample_s - 1e-12 ||
          (std::abs(r.time_per_sample_s - b->time_per_sample_s) <= 1e-12 && r.peak < b->peak))
        best = i;
    }
    return best;
  };
  out.recommended = fastest([](const PlanRow&) { return true; });
  for (int d : device_counts)
    if (auto b = fastest([d](const PlanRow& r) { return r.devices == d; })) out.fastest_per_devices.push_back(*b);
  return out;
}

}  // namespace halo::memory
