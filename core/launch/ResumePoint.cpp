// A checkpoint is trusted only after it loaded: a torn or overwritten file (copied in part,
// damaged on disk) fails in io::load_torch_archive and the next older one is tried.
#include "launch/ResumePoint.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <torch/torch.h>

#include "config/ResumeRules.h"
#include "io/TorchArchive.h"
#include "train/CheckpointName.h"
#include "util/Error.h"

namespace halo::launch {

namespace fs = std::filesystem;

std::vector<CheckpointFile> list_checkpoints(const std::string& run_dir, std::vector<std::string>& warnings) {
  std::vector<CheckpointFile> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(run_dir) / "checkpoints", ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".step-") && name.find(".pt.tmp-") != std::string::npos && e.is_regular_file(ec)) {
      if (fs::remove(e.path(), ec))
        warnings.push_back(fmt::format("removed {} (left by a killed write)", e.path().string()));
      continue;
    }
    if (const auto step = train::checkpoint_step(e.path()); step && e.is_regular_file(ec))
      out.push_back({e.path().string(), *step});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.step > b.step; });
  return out;
}

namespace {

// meta/step and meta/config of a checkpoint; util::Error saying what is wrong.
ResumePoint read_meta(const CheckpointFile& f) {
  torch::serialize::InputArchive ar;
  io::load_torch_archive(f.path, ar);
  at::Tensor step;
  c10::IValue cfg;
  if (!ar.try_read("meta/step", step) || step.numel() != 1 || !ar.try_read("meta/config", cfg) || !cfg.isString())
    throw util::Error(fmt::format("{} has no meta/step or meta/config: not a checkpoint of `halo launch`", f.path));
  ResumePoint p{f.path, step.item<int64_t>(), nlohmann::json::parse(cfg.toStringRef(), nullptr, false), {}};
  if (p.step != f.step)
    throw util::Error(fmt::format("{} holds step {}, not the step {} its name says", f.path, p.step, f.step));
  if (p.config.is_discarded() || !p.config.is_object())
    throw util::Error(fmt::format("{}: its meta/config is not a JSON object", f.path));
  return p;
}

}  // namespace

ResumePoint find_resume_point(const std::string& run_dir) {
  std::vector<std::string> removed;
  const auto files = list_checkpoints(run_dir, removed);
  if (files.empty())
    throw util::Error(
        fmt::format("run folder {} has no checkpoint to resume from (no checkpoints/step-<N>.pt)", run_dir),
        "set train.checkpoint_every in the experiment so runs can be resumed");
  std::vector<std::string> damaged;
  for (const auto& f : files) {
    try {
      ResumePoint p = read_meta(f);
      p.warnings = removed;
      for (const auto& d : damaged)
        p.warnings.push_back(fmt::format("{}; resuming from the previous checkpoint, {} (step {})", d, p.path, p.step));
      return p;
    } catch (const std::exception& e) {
      const auto* err = dynamic_cast<const util::Error*>(&e);
      damaged.push_back(fmt::format("checkpoint {} is damaged: {}", f.path, err ? err->problem() : e.what()));
    }
  }
  std::string all;
  for (const auto& d : damaged) all += "\n  - " + d;
  throw util::Error(fmt::format("run folder {}: no checkpoint loads:{}", run_dir, all),
                    "restore a checkpoint from a backup, or start a new run");
}

ResumePlan plan_resume(const std::string& run_dir, const std::vector<std::string>& overrides) {
  ResumePlan plan;
  plan.cfg = config::load_experiment((fs::path(run_dir) / "config.json").string(), overrides);
  plan.point = find_resume_point(run_dir);
  const config::ConfigResult trained = config::parse_experiment(plan.point.config);
  if (!trained.problems.empty())
    throw util::Error(fmt::format("{}: the experiment stored in it does not parse:\n{}", plan.point.path,
                                  config::describe_problems(trained.problems)),
                      "resume it with the halo version that wrote it");
  std::string refused;
  for (const auto& c : config::resume_changes(trained.config, plan.cfg)) {
    if (!c.allowed)
      refused += fmt::format("\n  - {}: {} -> {}: {}", c.field, c.before, c.after, c.note);
    else if (!c.note.empty())
      plan.notes.push_back(fmt::format("resuming with {} {} -> {}: {}", c.field, c.before, c.after, c.note));
  }
  if (!refused.empty())
    throw util::Error(fmt::format("cannot resume {} with a changed experiment (its checkpoint was trained "
                                  "otherwise); nothing was changed:{}",
                                  run_dir, refused),
                      "drop those --set overrides (or undo the edit of config.json), or start a new run with the "
                      "changed experiment; may change on resume: " +
                          config::resumable_settings());
  if (plan.point.step >= plan.cfg.schedule.steps)
    throw util::Error(
        fmt::format("run {} has finished: its checkpoint {} is at step {} of schedule.steps {}; "
                    "nothing to resume",
                    run_dir, fs::path(plan.point.path).filename().string(), plan.point.step, plan.cfg.schedule.steps),
        fmt::format("to train it further, raise the schedule: halo launch --resume {} --set "
                    "schedule.steps={}",
                    run_dir, 2 * plan.point.step));
  return plan;
}

}  // namespace halo::launch
