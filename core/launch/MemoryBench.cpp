// Runs the experiment once per strategy through the launcher (its own rank processes),
// then reads the step events: the counting allocator's peak and the step's start level.
#include "launch/MemoryBench.h"

#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "config/ExperimentConfig.h"
#include "launch/Launcher.h"
#include "memory/MemoryPlanner.h"
#include "protocol/EventLine.h"
#include "util/Error.h"

namespace halo::launch {

namespace fs = std::filesystem;

namespace {

// Strips `suffix` from the end of s when it is there.
bool strip(std::string& s, const std::string& suffix) {
  if (s.size() <= suffix.size() || s.compare(s.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  s.resize(s.size() - suffix.size());
  return true;
}

}  // namespace

BenchSetup parse_strategy(const std::string& s) {
  BenchSetup out;
  std::string head = s;
  for (config::ShardState z :
       {config::ShardState::Optimizer, config::ShardState::Gradients, config::ShardState::Weights})
    if (strip(head, std::string(config::zero_suffix(z)))) {
      out.shard_state = z;
      break;
    }
  const bool ckpt = strip(head, "+checkpoint");
  if (!ckpt && (head == "none" || head == "checkpoint")) {
    out.strategy = *config::from_string<config::Strategy>(head);
    return out;
  }
  if (head.rfind("tp", 0) == 0 && head.size() > 2 && head.size() < 5 &&
      head.find_first_not_of("0123456789", 2) == std::string::npos) {
    out.sp = std::stoi(head.substr(2));
    out.strategy = config::make_strategy(true, ckpt);
    if (out.sp >= 2 && out.sp <= 64) return out;
  }
  throw util::Error(fmt::format("strategy '{}' is unknown", s),
                    "use none, checkpoint, tpN or tpN+checkpoint (N = 2..64), each optionally followed by +zero1 "
                    "(optimizer state sharded over the ranks), +zero2 (and gradients) or +zero3 (and the blocks' "
                    "weights), e.g. tp4+checkpoint+zero3");
}

std::vector<MemoryBenchRow> run_memory_bench(const MemoryBenchOptions& o) {
  if (o.steps < 2) throw util::Error("bench memory needs --steps >= 2 (one warm-up step, then measured steps)");
  for (const auto& s : o.strategies) parse_strategy(s);  // refuse typos before running anything
  const fs::path root = fs::temp_directory_path() / fmt::format("halo-bench-memory-{}", ::getpid());
  std::vector<MemoryBenchRow> rows;
  for (const auto& s : o.strategies) {
    const auto [strategy, sp, shard_state] = parse_strategy(s);
    LaunchOptions lo;
    lo.experiment = o.experiment;
    lo.overrides = o.overrides;
    const std::string run_dir = (root / s).string();
    for (const std::string& kv : std::vector<std::string>{
             "parallel.strategy=" + config::name_of(strategy), fmt::format("parallel.sp={}", sp), "parallel.dp=1",
             "parallel.shard_state=" + config::name_of(shard_state), fmt::format("schedule.steps={}", o.steps),
             "schedule.warmup_steps=0", "train.checkpoint_every=0", "run_dir=" + run_dir})
      lo.overrides.push_back(kv);
    const config::ExperimentConfig cfg = config::load_experiment(o.experiment, lo.overrides);
    std::optional<memory::Prediction> predicted;
    if (memory::plans(cfg)) predicted = memory::predict(cfg);
    std::fprintf(stderr, "bench memory: %s (%d rank%s) ...\n", s.c_str(), sp, sp > 1 ? "s" : "");
    LaunchResult r = run_launch(lo);
    if (r.exit_code != 0) throw util::Error(fmt::format("bench memory: strategy {} failed: {}", s, r.failure));
    std::vector<MemoryBenchRow> per_rank(static_cast<size_t>(sp));
    std::vector<int> measured(static_cast<size_t>(sp), 0);
    std::ifstream in(run_dir + "/events.jsonl");
    for (std::string text; std::getline(in, text);) {
      const protocol::EventLine line = protocol::parse_line(text);
      const auto* step = std::get_if<protocol::StepEvent>(&line.event);
      if (step == nullptr || step->step == 0) continue;  // step 0 warms up
      auto& row = per_rank.at(static_cast<size_t>(line.rank));
      const protocol::StepMemory& m = step->memory;
      row.strategy = s;
      row.kind = strategy;
      row.sp = sp;
      row.shard_state = shard_state;
      row.rank = line.rank;
      row.total_peak = std::max(row.total_peak, static_cast<double>(m.peak));
      row.activation_peak = std::max(row.activation_peak, static_cast<double>(m.peak - m.step_start));
      row.rss = std::max(row.rss, static_cast<double>(m.rss));
      row.step_ms += step->time_ms.total;
      ++measured.at(static_cast<size_t>(line.rank));
    }
    for (size_t k = 0; k < per_rank.size(); ++k) {
      per_rank[k].step_ms /= std::max(1, measured[k]);
      per_rank[k].predicted = predicted.has_value();
      if (!predicted) {
        rows.push_back(per_rank[k]);
        continue;
      }
      const memory::RankPrediction& p = predicted->ranks.at(k);
      per_rank[k].predicted_activation = static_cast<double>(p.activation_peak);
      per_rank[k].predicted_total = static_cast<double>(p.peak);
      per_rank[k].activation_error = p.activation_peak / std::max(1.0, per_rank[k].activation_peak) - 1.0;
      per_rank[k].total_error = p.peak / std::max(1.0, per_rank[k].total_peak) - 1.0;
      rows.push_back(per_rank[k]);
    }
    std::error_code ec;
    fs::remove_all(run_dir, ec);
  }
  const MemoryBenchRow* none = nullptr;
  for (const auto& r : rows)
    if (r.kind == config::Strategy::None && r.shard_state == config::ShardState::None) none = &r;
  if (none)
    for (auto& r : rows) {
      r.activation_ratio = r.activation_peak / std::max(1.0, none->activation_peak);
      r.step_ratio = r.step_ms / std::max(1e-9, none->step_ms);
    }
  return rows;
}

}  // namespace halo::launch
