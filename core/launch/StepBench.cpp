// Runs the experiment's step in rounds through the launcher (rank 0's step events), and the
// timm peer (packaging/bench/timm_step.py, compiled in) in a child Python between them.
#include "launch/StepBench.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/ExperimentConfig.h"
#include "launch/Launcher.h"
#include "launch/RankSpawner.h"
#include "launch/TimmStepScript.h"
#include "util/Error.h"

namespace halo::launch {

namespace fs = std::filesystem;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

StepPhasesMs median_phases(const std::vector<StepPhasesMs>& steps) {
  auto of = [&](double StepPhasesMs::*f) {
    std::vector<double> v;
    for (const auto& s : steps) v.push_back(s.*f);
    return median(v);
  };
  return {of(&StepPhasesMs::forward), of(&StepPhasesMs::backward), of(&StepPhasesMs::optim), of(&StepPhasesMs::total)};
}

void add_round(StepBenchSide& side, const std::vector<StepPhasesMs>& measured) {
  const StepPhasesMs m = median_phases(measured);
  if (side.rounds_ms.empty() || m.total < side.best.total) side.best = m;
  side.rounds_ms.push_back(m.total);
}

std::string python_of(const StepBenchOptions& o) {
  if (!o.python.empty()) return o.python;
  if (const char* env = std::getenv("HALO_PYTHON"); env != nullptr && *env != '\0') return env;
  return HALO_VENV_PYTHON;
}

// Runs python with argv, its output to <dir>/rank0.log; the exit code.
int run_python(const std::string& python, const std::vector<std::string>& args, const fs::path& dir, std::string* log) {
  fs::create_directories(dir);
  RankSpawner p(python, args, {}, dir.string());  // argv[0] is the program
  p.start(1, 0);
  const auto exits = p.wait_all(std::chrono::seconds(3600));
  if (log) *log = p.log_tail(0, 12);
  return exits.empty() ? -1 : exits.front().code;
}

void require_timm(const std::string& python, const fs::path& dir) {
  if (!fs::exists(python))
    throw util::Error(fmt::format("bench step --vs timm: no Python interpreter at {}", python),
                      "pass --python /path/to/python (one with torch and timm), or set HALO_PYTHON");
  std::string log;
  if (run_python(python, {"-c", "import torch, timm"}, dir, &log) != 0)
    throw util::Error(fmt::format("bench step --vs timm: timm is not installed in {} ({})", python, log),
                      "install it there (`" + python + " -m pip install timm`), or pass --python with one that has it");
}

StepBenchResult describe(const config::ExperimentConfig& cfg) {
  StepBenchResult r;
  r.arch = cfg.model.arch;
  r.precision = config::name_of(cfg.train.precision);
  r.images = cfg.data.batch * cfg.data.views;
  r.height = cfg.data.height;
  r.width = cfg.data.width;
  r.sp = config::shards(cfg.parallel.strategy) ? cfg.parallel.sp : 1;
  r.threads = cfg.parallel.threads_per_rank;
  r.checkpoint = config::checkpoints(cfg.parallel.strategy);
  return r;
}

// Sets an environment variable for the ranks this process starts, for one scope.
struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value, bool on) : name_(on ? name : nullptr) {
    if (name_) ::setenv(name_, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (name_) ::unsetenv(name_);
  }
  const char* name_;
};

std::vector<StepPhasesMs> halo_round(const StepBenchOptions& o, const fs::path& root, int round,
                                     std::optional<train::StepProfile>* profile) {
  LaunchOptions lo;
  lo.experiment = o.experiment;
  lo.overrides = o.overrides;
  const fs::path run_dir = root / fmt::format("halo-{}", round);
  for (const std::string& kv : {fmt::format("schedule.steps={}", o.steps), std::string("schedule.warmup_steps=0"),
                                std::string("train.checkpoint_every=0"), std::string("train.eval_every=0"),
                                std::string("train.log_every=1"), "run_dir=" + run_dir.string()})
    lo.overrides.push_back(kv);
  lo.db_path = (root / "history.db").string();  // the user's history keeps no bench runs
  std::vector<StepPhasesMs> steps;
  lo.on_step = [&](const StepProgress& p) {
    if (p.step.step == 0) return;  // warm-up
    const auto& t = p.step.time_ms;
    steps.push_back({t.forward, t.backward, t.optim, t.total});
  };
  const ScopedEnv profiled("HALO_PROFILE_STEP", "1", profile != nullptr);  // Worker.cpp: after the warm-up
  const LaunchResult r = run_launch(lo);
  if (r.exit_code != 0) throw util::Error(fmt::format("bench step: Halo's run failed: {}", r.failure));
  if (profile) {
    const fs::path file = run_dir / "profile-rank0.json";
    if (!fs::exists(file)) throw util::Error(fmt::format("bench step: rank 0 wrote no profile ({})", file.string()));
    *profile = nlohmann::json::parse(std::ifstream(file)).get<train::StepProfile>();
  }
  std::error_code ec;
  fs::remove_all(run_dir, ec);
  return steps;
}

std::vector<StepPhasesMs> timm_round(const config::ExperimentConfig& cfg, const StepBenchOptions& o,
                                     const std::string& python, const fs::path& root, int round, std::string* peer,
                                     std::optional<train::StepProfile>* profile) {
  const fs::path spec = root / "timm-spec.json", out = root / fmt::format("timm-{}.json", round);
  const nlohmann::json j = {{"arch", cfg.model.arch},
                            {"num_classes", cfg.model.num_classes},
                            {"drop_path", cfg.model.drop_path},
                            {"views", cfg.data.views},
                            {"images", cfg.data.batch * cfg.data.views},
                            {"height", cfg.data.height},
                            {"width", cfg.data.width},
                            {"lr", cfg.optim.lr},
                            {"weight_decay", cfg.optim.weight_decay},
                            {"beta1", cfg.optim.beta1},
                            {"beta2", cfg.optim.beta2},
                            {"eps", cfg.optim.eps},
                            {"grad_clip", cfg.optim.grad_clip},
                            {"threads", cfg.parallel.threads_per_rank},
                            {"precision", config::name_of(cfg.train.precision)},
                            {"checkpoint", config::checkpoints(cfg.parallel.strategy)},
                            {"steps", o.steps},
                            {"profile", profile != nullptr},
                            {"seed", cfg.train.seed}};
  std::ofstream(spec) << j.dump(2);
  const fs::path dir = root / fmt::format("timm-log-{}", round);
  std::string log;
  const int code = run_python(python, {(root / "timm_step.py").string(), spec.string(), out.string()}, dir, &log);
  if (code != 0) throw util::Error(fmt::format("bench step: the timm step failed (exit {}): {}", code, log));
  const nlohmann::json res = nlohmann::json::parse(std::ifstream(out));
  *peer = fmt::format("torch {}, timm {}", res.at("torch").get<std::string>(), res.at("timm").get<std::string>());
  if (profile) *profile = res.at("profile").get<train::StepProfile>();
  std::vector<StepPhasesMs> steps;
  for (size_t i = 1; i < res.at("steps").size(); ++i) {
    const auto& s = res["steps"][i];
    steps.push_back({s.at("forward"), s.at("backward"), s.at("optim"), s.at("total")});
  }
  return steps;
}

}  // namespace

StepBenchResult run_step_bench(const StepBenchOptions& o, const std::function<void(const std::string&)>& progress) {
  if (o.steps < 2) throw util::Error("bench step needs --steps >= 2 (one warm-up step, then measured steps)");
  if (o.rounds < 1) throw util::Error("bench step needs --rounds >= 1");
  const config::ExperimentConfig cfg = config::load_experiment(o.experiment, o.overrides);
  if (o.vs_timm && cfg.task != config::Task::Convnext)
    throw util::Error(fmt::format("bench step --vs timm compares the convnext task; {} is task {}", o.experiment,
                                  config::name_of(cfg.task)),
                      "run it without --vs timm, or with a convnext experiment such as experiments/quickstart.json");
  if (o.vs_timm && cfg.parallel.device != config::Device::Cpu)
    throw util::Error("bench step --vs timm runs the peer on the CPU", "use parallel.device=cpu for the comparison");
  const fs::path root = fs::temp_directory_path() / fmt::format("halo-bench-step-{}", ::getpid());
  fs::create_directories(root);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{root};
  const std::string python = python_of(o);
  if (o.vs_timm) {
    require_timm(python, root / "probe");
    std::ofstream(root / "timm_step.py") << kTimmStepScript;
  }
  StepBenchResult r = describe(cfg);
  r.halo.name = "halo";
  if (o.vs_timm) r.timm = StepBenchSide{"timm", {}, {}};
  for (int k = 0; k < o.rounds; ++k) {
    const bool last = k + 1 == o.rounds && o.profile;
    add_round(r.halo, halo_round(o, root, k, last ? &r.halo.profile : nullptr));
    std::string line = fmt::format("round {}/{}: halo {:.1f} ms", k + 1, o.rounds, r.halo.rounds_ms.back());
    if (r.timm) {
      add_round(*r.timm, timm_round(cfg, o, python, root, k, &r.peer, last ? &r.timm->profile : nullptr));
      line += fmt::format(", timm {:.1f} ms", r.timm->rounds_ms.back());
    }
    if (progress) progress(line);
  }
  if (r.timm) r.ratio = r.halo.best.total / std::max(1e-9, r.timm->best.total);
  return r;
}

}  // namespace halo::launch
