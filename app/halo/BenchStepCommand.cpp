// `halo bench step EXPERIMENT.json [--vs timm] [--json]`: Halo's training step and, with
// --vs timm, the same step in timm from the project's .venv, alternating; both times and the ratio.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "BenchStepCommand.h"
#include "launch/StepBench.h"

namespace halo::app {

namespace {

nlohmann::json side_json(const launch::StepBenchSide& s) {
  nlohmann::json j = {{"rounds_ms", s.rounds_ms},
                      {"step_ms", s.best.total},
                      {"forward_ms", s.best.forward},
                      {"backward_ms", s.best.backward},
                      {"optim_ms", s.best.optim}};
  if (s.profile) j["profile"] = *s.profile;
  return j;
}

// The ops with the most self time in the profiled step, and what no op accounts for; on a
// GPU then the kernels with the most device time.
void print_profile(const std::string& side, const train::StepProfile& p, size_t rows) {
  std::printf("\n%s, one profiled step: %.1f ms, ops' self time %.1f ms (the rest: waits, code outside ops)\n",
              side.c_str(), p.step_ms, p.ops_self_ms);
  auto first_rows = [&](bool gpu, auto print) {  // p.ops is sorted by self time
    size_t shown = 0;
    for (const train::OpTime& o : p.ops)
      if (o.gpu == gpu && shown++ < rows) print(o);
  };
  std::printf("  %-44s %10s %10s %7s\n", "op", "self ms", "total ms", "calls");
  first_rows(false, [](const train::OpTime& o) {
    std::printf("  %-44.44s %10.1f %10.1f %7lld\n", o.name.c_str(), o.self_ms, o.total_ms,
                static_cast<long long>(o.calls));
  });
  if (p.gpu_ms <= 0) return;
  std::printf("  GPU kernels: %.1f ms of device time\n  %-80s %10s %7s\n", p.gpu_ms, "kernel", "ms", "calls");
  first_rows(true, [](const train::OpTime& o) {
    std::printf("  %-80.80s %10.1f %7lld\n", o.name.c_str(), o.self_ms, static_cast<long long>(o.calls));
  });
}

void print_table(const launch::StepBenchResult& r) {
  std::printf("%s, (%lld, 3, %lld, %lld) per step, sp %d, %d thread%s per process, %s%s\n", r.arch.c_str(),
              static_cast<long long>(r.images), static_cast<long long>(r.height), static_cast<long long>(r.width), r.sp,
              r.threads, r.threads > 1 ? "s" : "", r.precision.c_str(), r.checkpoint ? ", checkpointing" : "");
  std::printf("%-6s %10s %10s %10s %10s   %s\n", "side", "step ms", "forward", "backward", "optim",
              "each round's median step (ms)");
  auto row = [](const launch::StepBenchSide& s) {
    std::string rounds;
    for (double v : s.rounds_ms) rounds += (rounds.empty() ? "" : " ") + std::to_string(static_cast<int>(v + 0.5));
    std::printf("%-6s %10.1f %10.1f %10.1f %10.1f   %s\n", s.name.c_str(), s.best.total, s.best.forward,
                s.best.backward, s.best.optim, rounds.c_str());
  };
  row(r.halo);
  if (r.timm) {
    row(*r.timm);
    std::printf("halo / timm: %.2f (fastest round of each; %s)\n", r.ratio, r.peer.c_str());
  }
  if (r.halo.profile) print_profile("halo (rank 0)", *r.halo.profile, 15);
  if (r.timm && r.timm->profile) print_profile("timm", *r.timm->profile, 15);
}

}  // namespace

void add_bench_step_command(CLI::App* bench) {
  struct Args {
    launch::StepBenchOptions o;
    std::string vs;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  auto* c =
      bench->add_subcommand("step", "Halo's training step, and with --vs timm the same step in timm, alternating");
  c->add_option("experiment", a->o.experiment, "EXPERIMENT.json (task convnext for --vs timm)")->required();
  c->add_option("--vs", a->vs, "the peer to run beside Halo: timm (from the .venv, or --python)")
      ->check(CLI::IsMember({"timm"}));
  c->add_option("--steps", a->o.steps, "steps per round and side (the first is warm-up)")->capture_default_str();
  c->add_option("--rounds", a->o.rounds, "rounds (Halo, then the peer)")->capture_default_str();
  c->add_option("--python", a->o.python, "the peer's Python (default: $HALO_PYTHON, else the project's .venv)");
  c->add_option("--set", a->o.overrides, "override an experiment field (repeatable)");
  c->add_flag("--profile", a->o.profile,
              "profile one step of the last round on each side: self time per op (LibTorch's profiler; "
              "Halo's rank 0)");
  c->add_flag("--json", a->json, "print JSON");
  c->callback([a]() {
    a->o.vs_timm = a->vs == "timm";
    const launch::StepBenchResult r = launch::run_step_bench(
        a->o, [](const std::string& line) { std::fprintf(stderr, "bench step: %s\n", line.c_str()); });
    if (!a->json) return print_table(r);
    nlohmann::json j = {{"arch", r.arch},
                        {"images", r.images},
                        {"height", r.height},
                        {"width", r.width},
                        {"sp", r.sp},
                        {"threads", r.threads},
                        {"precision", r.precision},
                        {"checkpoint", r.checkpoint},
                        {"halo", side_json(r.halo)}};
    if (r.timm) {
      j["timm"] = side_json(*r.timm);
      j["ratio"] = r.ratio;
      j["peer"] = r.peer;
    }
    std::printf("%s\n", j.dump(2).c_str());
  });
}

}  // namespace halo::app
