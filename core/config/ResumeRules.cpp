// Rules by setting or section, first match wins. Free: cadence, schedule and optimizer
// hyperparameters. Noted: layout and global batch (a checkpoint holds full, unsharded tensors,
// so any sp/dp/strategy loads). Refused: what defines the model, its input and its state.
#include "config/ResumeRules.h"

#include <map>
#include <string_view>

#include <fmt/format.h>

namespace halo::config {

namespace {

enum class Rule { Free, Layout, Batch, Refused };

struct Entry {
  std::string_view prefix;  // a dotted field, or "section." for all of a section
  Rule rule;
  std::string_view why;  // Refused: the reason
};

constexpr Entry kRules[] = {
    {"name", Rule::Free, ""},
    {"run_dir", Rule::Free, ""},
    {"optim.name", Rule::Refused, "the optimizer's state in the checkpoint is of another kind"},
    {"optim.", Rule::Free, ""},
    {"schedule.", Rule::Free, ""},
    {"loss.", Rule::Free, ""},
    {"train.log_every", Rule::Free, ""},
    {"train.checkpoint_every", Rule::Free, ""},
    {"train.eval_every", Rule::Free, ""},
    {"train.nonfinite", Rule::Free, ""},
    {"train.accumulation", Rule::Batch, ""},
    {"train.seed", Rule::Refused, "the data order and random masks are a function of the seed"},
    {"train.precision", Rule::Refused, "the precision (and the fp16 loss scaler's state) is part of the experiment"},
    {"data.workers", Rule::Free, ""},
    {"data.eval_split", Rule::Free, ""},
    {"data.batch", Rule::Batch, ""},
    {"data.", Rule::Refused, "the input (source, views, height, width) is part of the experiment"},
    {"parallel.dp", Rule::Batch, ""},
    {"parallel.threads_per_rank", Rule::Free, ""},
    {"parallel.pointwise", Rule::Free, ""},
    {"parallel.", Rule::Layout, ""},
    {"task", Rule::Refused, "the task defines the model and its losses"},
    {"model.pretrained", Rule::Free, ""},  // read only when a run starts; a resumed run takes its checkpoint
    {"model.pretrained_skip", Rule::Free, ""},
    {"model.", Rule::Refused, "the checkpoint's weights are of this model"},
};

const Entry& rule_for(const std::string& field) {
  for (const auto& e : kRules)
    if (e.prefix.ends_with('.') ? field.starts_with(e.prefix) : field == e.prefix) return e;
  static const Entry refused{"", Rule::Refused, "it has no rule for resuming"};
  return refused;
}

void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  for (const auto& [k, v] : j.items()) {
    const std::string path = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object())
      flatten(v, path, out);
    else
      out[path] = v;
  }
}

int64_t global_batch(const ExperimentConfig& c) { return c.data.batch * c.train.accumulation * c.parallel.dp; }

}  // namespace

std::vector<ResumeChange> resume_changes(const ExperimentConfig& trained, const ExperimentConfig& resumed) {
  std::map<std::string, nlohmann::json> before, after;
  flatten(to_json(trained), "", before);
  flatten(to_json(resumed), "", after);
  std::vector<ResumeChange> out;
  for (const auto& [field, old_value] : before) {
    const nlohmann::json& new_value = after[field];
    if (new_value == old_value) continue;
    const Entry& e = rule_for(field);
    ResumeChange c{field, old_value.dump(), new_value.dump(), e.rule != Rule::Refused, ""};
    if (e.rule == Rule::Layout)
      c.note =
          "the checkpoint holds full tensors, so the run goes on in the new layout; its losses can differ from "
          "an uninterrupted run's in the last digits";
    if (e.rule == Rule::Batch)
      c.note = fmt::format(
          "the global batch changes from {} to {} samples, and the data order from the "
          "uninterrupted run's",
          global_batch(trained), global_batch(resumed));
    if (e.rule == Rule::Refused) c.note = std::string(e.why);
    out.push_back(std::move(c));
  }
  return out;
}

std::string resumable_settings() {
  return "optim.* (but optim.name), schedule.*, loss.*, train.log_every, train.checkpoint_every, train.eval_every, "
         "train.nonfinite, data.workers, data.eval_split, parallel.threads_per_rank, parallel.pointwise, "
         "model.pretrained freely; "
         "parallel.* layout, "
         "parallel.dp, data.batch and train.accumulation with a note";
}

}  // namespace halo::config
