// `halo bench comm` (table or --json) and its hidden per-rank verb `bench comm-rank`.
// Benchmarks are measurements, never timed tests.
#include <cstdio>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "BenchStepCommand.h"
#include "Commands.h"
#include "launch/CommBench.h"
#include "launch/MemoryBench.h"
#include "store/StoreBench.h"
#include "util/Error.h"

namespace halo::app {

namespace {

void add_shape_options(CLI::App* c, launch::CommBenchOptions& o) {
  c->add_option("--batch", o.batch, "images (B) of the stage input")->capture_default_str();
  c->add_option("--dim", o.dim, "channels (convnext_tiny stage 0: 96)")->capture_default_str();
  c->add_option("--height", o.height, "feature-map height")->capture_default_str();
  c->add_option("--width", o.width, "feature-map width (split over sp)")->capture_default_str();
  c->add_option("--depth", o.depth, "blocks in the stage")->capture_default_str();
  c->add_option("--iters", o.iters, "timed iterations")->capture_default_str();
  c->add_option("--warmup", o.warmup, "untimed iterations first")->capture_default_str();
}

void print(const launch::CommBenchReport& r, bool json) {
  if (json) {
    nlohmann::json j;
    j["shape"] = {r.options.batch, r.options.dim, r.options.height, r.options.width};
    j["depth"] = r.options.depth;
    for (const auto& l : r.layers)
      j["layers"].push_back({{"layer", l.layer},
                             {"halo_left", l.halo_left},
                             {"halo_right", l.halo_right},
                             {"bytes_per_step", l.bytes_per_step},
                             {"exchange_ms", l.exchange_ms}});
    for (const auto& c : r.configs)
      j["configs"].push_back(
          {{"config", c.config}, {"sp", c.sp}, {"overlap", c.overlap}, {"step_ms", c.step_ms}, {"speedup", c.speedup}});
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("ConvNeXt stage: %d blocks on (%ld, %ld, %ld, %ld) fp32, CPU, Gloo over loopback\n\n", r.options.depth,
              r.options.batch, r.options.dim, r.options.height, r.options.width);
  std::printf("%-22s %10s %16s %14s\n", "layer (rank 0)", "halo L+R", "bytes/step", "exchange ms");
  for (const auto& l : r.layers)
    std::printf("%-22s %6ld+%-3ld %16ld %14.3f\n", l.layer.c_str(), l.halo_left, l.halo_right, l.bytes_per_step,
                l.exchange_ms);
  std::printf("\n%-36s %12s %10s\n", "configuration", "step ms", "speed-up");
  for (const auto& c : r.configs) std::printf("%-36s %12.1f %9.2fx\n", c.config.c_str(), c.step_ms, c.speedup);
}

}  // namespace

void add_bench_commands(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks: step, comm, memory, store (tables or --json)");
  bench->require_subcommand(1);
  add_bench_step_command(bench);

  struct Args {
    launch::CommBenchOptions o;
    bool json = false, overlap = true;
    std::string out;
  };
  auto a = std::make_shared<Args>();
  auto* comm = bench->add_subcommand("comm", "Halo exchange cost and sp=2 step time against one process");
  add_shape_options(comm, a->o);
  comm->add_flag("--json", a->json, "print JSON");
  comm->callback([a]() { print(launch::run_comm_bench(a->o), a->json); });

  struct MemArgs {
    launch::MemoryBenchOptions o;
    std::string strategies = "none,checkpoint,tp2,tp4,tp4+checkpoint";
    bool json = false;
  };
  auto m = std::make_shared<MemArgs>();
  auto* mem = bench->add_subcommand("memory", "Peak memory and step time of each strategy, each in its own processes");
  mem->add_option("experiment", m->o.experiment, "EXPERIMENT.json")->required();
  mem->add_option("--strategies", m->strategies,
                  "comma-separated: none, checkpoint, tpN, tpN+checkpoint, each optionally +zero1 (optimizer state "
                  "sharded over the ranks), +zero2 (and gradients) or +zero3 (and the blocks' weights)")
      ->capture_default_str();
  mem->add_option("--steps", m->o.steps, "steps per strategy (the first is warm-up)")->capture_default_str();
  mem->add_option("--set", m->o.overrides, "override an experiment field (repeatable)");
  mem->add_flag("--json", m->json, "print JSON");
  mem->callback([m]() {
    m->o.strategies.clear();
    std::stringstream in(m->strategies);
    for (std::string s; std::getline(in, s, ',');) m->o.strategies.push_back(s);
    const auto rows = launch::run_memory_bench(m->o);
    const double MiB = 1024.0 * 1024.0;
    if (m->json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : rows) {
        auto or_null = [&r](double v) { return r.predicted ? nlohmann::json(v) : nlohmann::json(nullptr); };
        j.push_back({{"strategy", r.strategy},
                     {"sp", r.sp},
                     {"rank", r.rank},
                     {"activation_peak_bytes", r.activation_peak},
                     {"total_peak_bytes", r.total_peak},
                     {"rss_bytes", r.rss},
                     {"step_ms", r.step_ms},
                     {"activation_ratio", r.activation_ratio},
                     {"step_ratio", r.step_ratio},
                     {"predicted_activation_bytes", or_null(r.predicted_activation)},
                     {"predicted_total_bytes", or_null(r.predicted_total)},
                     {"activation_error", or_null(r.activation_error)},
                     {"total_error", or_null(r.total_error)}});
      }
      std::printf("%s\n", j.dump(2).c_str());
      return;
    }
    std::printf("%-24s %4s %16s %16s %14s %14s %7s %10s %10s %10s %9s\n", "strategy", "rank", "activation MiB",
                "predicted MiB", "total MiB", "predicted MiB", "error", "RSS MiB", "step ms", "act/none", "time/none");
    auto mib = [&](const launch::MemoryBenchRow& r, double v) {
      return r.predicted ? fmt::format("{:.1f}", v / MiB) : std::string("-");
    };
    for (const auto& r : rows)
      std::printf("%-24s %4d %16.1f %16s %14.1f %14s %7s %10.1f %10.1f %10.3f %9.2f\n", r.strategy.c_str(), r.rank,
                  r.activation_peak / MiB, mib(r, r.predicted_activation).c_str(), r.total_peak / MiB,
                  mib(r, r.predicted_total).c_str(),
                  r.predicted ? fmt::format("{:+.1f}%", 100 * r.total_error).c_str() : "-", r.rss / MiB, r.step_ms,
                  r.activation_ratio, r.step_ratio);
    if (!rows.empty() && !rows.front().predicted)
      std::printf("predicted: -, the memory planner does not model this backbone yet (ConvNeXt only)\n");
  });

  struct StoreArgs {
    store::StoreBenchOptions o;
    bool json = false;
  };
  auto st = std::make_shared<StoreArgs>();
  auto* sto =
      bench->add_subcommand("store", "Run-history write rate (8 ranks logging every step) with a polling reader");
  sto->add_option("--rows", st->o.metric_rows, "metric rows to write")->capture_default_str();
  sto->add_option("--db", st->o.db_path, "database file (default: a temporary file, removed afterwards)");
  sto->add_flag("--json", st->json, "print JSON");
  sto->callback([st]() {
    const store::StoreBenchReport r = store::run_store_bench(st->o);
    if (st->json) {
      std::printf("%s\n", nlohmann::json({{"metric_rows", r.metric_rows},
                                          {"sample_rows", r.sample_rows},
                                          {"steps", r.steps},
                                          {"ranks", st->o.ranks},
                                          {"seconds", r.seconds},
                                          {"rows_per_s", r.rows_per_s},
                                          {"reader_polls", r.reader_polls},
                                          {"reader_worst_wait_ms", r.reader_worst_wait_ms},
                                          {"reader_mean_wait_ms", r.reader_mean_wait_ms}})
                              .dump(2)
                              .c_str());
      return;
    }
    std::printf("%lld metric rows + %lld sample rows (%lld steps x %d ranks) in %.3f s: %.0f metric rows/s\n",
                static_cast<long long>(r.metric_rows), static_cast<long long>(r.sample_rows),
                static_cast<long long>(r.steps), st->o.ranks, r.seconds, r.rows_per_s);
    std::printf("reader: %lld polls, worst wait %.2f ms, mean %.3f ms\n", static_cast<long long>(r.reader_polls),
                r.reader_worst_wait_ms, r.reader_mean_wait_ms);
  });

  auto r = std::make_shared<Args>();
  auto* rank = bench->add_subcommand("comm-rank", "One rank of `halo bench comm`");
  rank->group("");
  add_shape_options(rank, r->o);
  rank->add_flag("--overlap,!--no-overlap", r->overlap, "overlap halo exchange with the interior");
  rank->add_option("--out", r->out, "JSON result file (rank 0)")->required();
  rank->callback([r]() { launch::run_comm_bench_rank(r->o, r->overlap, r->out); });
}

}  // namespace halo::app
