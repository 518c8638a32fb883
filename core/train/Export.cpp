// Reads the checkpoint's config to rebuild the model's parameter list (names and shapes,
// in timm's order), takes every tensor from the checkpoint, and writes them atomically.
#include "train/Export.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "arch/Backbones.h"
#include "config/ExperimentConfig.h"
#include "io/AtomicFile.h"
#include "io/TensorFile.h"
#include "io/TorchArchive.h"
#include "model/Backbone.h"
#include "model/StateDict.h"
#include "train/CheckpointName.h"
#include "util/Error.h"
#include "util/Version.h"

namespace halo::train {

namespace fs = std::filesystem;

namespace {

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) || fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// Why `target` must not be written, or "" when it may (given --force for an existing file).
std::string protected_reason(const fs::path& target, const ExportOptions& o) {
  if (same_file(target, o.checkpoint)) return "it is the checkpoint being exported";
  for (const auto& k : o.keep)
    if (same_file(target, k)) return "it is the run history";
  std::error_code ec;
  if (checkpoint_step(target) || (fs::exists(target, ec) && target.parent_path().filename() == "checkpoints"))
    return "it is a resume checkpoint";
  char head[16] = {0};
  std::ifstream(target, std::ios::binary).read(head, sizeof head);
  if (std::memcmp(head, "SQLite format 3", 16) == 0) return "it is a SQLite database (a run history?)";
  return "";
}

// Before anything is read or written: every file the export would write may be written.
void check_outputs(const ExportOptions& o) {
  for (const fs::path& target : {fs::path(o.output), fs::path(o.output + ".json")}) {
    if (const std::string why = protected_reason(target, o); !why.empty())
      throw util::Error(fmt::format("refusing to write {}: {}", target.string(), why),
                        "give -o a new file, e.g. -o model.safetensors");
    std::error_code ec;
    if (fs::exists(target, ec) && !o.force)
      throw util::Error(fmt::format("{} already exists", target.string()),
                        "pass --force to replace it, or give -o another file");
  }
}

}  // namespace

ExportResult export_checkpoint(const ExportOptions& o) {
  if (o.format != "safetensors" && o.format != "torch")
    throw util::Error(fmt::format("--format '{}' is unknown", o.format), "choose safetensors or torch");
  if (!fs::exists(o.checkpoint))
    throw util::Error(fmt::format("checkpoint {} does not exist", o.checkpoint),
                      "checkpoints are in <run folder>/checkpoints/step-*.pt");
  check_outputs(o);
  torch::serialize::InputArchive ar;
  io::load_torch_archive(o.checkpoint, ar);
  c10::IValue cfg_value;
  if (!ar.try_read("meta/config", cfg_value) || !cfg_value.isString())
    throw util::Error(fmt::format("{} has no experiment config (meta/config)", o.checkpoint),
                      "export checkpoints written by `halo launch`");
  const nlohmann::json cfg_json = nlohmann::json::parse(cfg_value.toStringRef());
  const config::ConfigResult cfg = config::parse_experiment(cfg_json);
  if (!arch::backbone_family(cfg.config.model.arch))
    throw util::Error(fmt::format("{}: architecture '{}' cannot be exported", o.checkpoint, cfg.config.model.arch),
                      "choose one of: " + arch::backbone_names());
  at::Tensor step_t;
  ar.read("meta/step", step_t);

  torch::NoGradGuard no_grad;
  const std::shared_ptr<model::BackboneImpl> m =
      model::make_backbone(cfg.config.model.arch, cfg.config.model.num_classes);
  io::NamedTensors tensors;
  for (const auto& [name, want] : model::state_dict(*m)) {
    at::Tensor t;
    if (!ar.try_read("model/" + name, t) || t.sizes() != want.sizes())
      throw util::Error(
          fmt::format("{}: tensor '{}' is missing or not of shape {}", o.checkpoint, name, c10::str(want.sizes())));
    tensors.emplace_back(name, t.contiguous());
  }
  ExportResult r{o.output, o.output + ".json", cfg.config.model.arch, step_t.item<int64_t>(), tensors.size(), 0};
  const std::map<std::string, std::string> meta{{"format", "pt"},
                                                {"halo_version", util::version()},
                                                {"arch", r.arch},
                                                {"step", std::to_string(r.step)},
                                                {"config", cfg_json.dump()}};
  if (o.format == "safetensors")
    io::save_safetensors(o.output, tensors, meta);
  else
    io::save_torch_state_dict(o.output, tensors);
  r.bytes = static_cast<int64_t>(fs::file_size(o.output));
  nlohmann::json manifest = {{"file", fs::path(o.output).filename().string()},
                             {"format", o.format},
                             {"arch", r.arch},
                             {"timm_model", r.arch},
                             {"num_classes", cfg.config.model.num_classes},
                             {"step", r.step},
                             {"source_checkpoint", fs::absolute(o.checkpoint).string()},
                             {"halo_version", util::version()},
                             {"bytes", r.bytes},
                             {"config", cfg_json}};
  for (const auto& [name, t] : tensors)
    manifest["tensors"].push_back(
        {{"name", name}, {"shape", t.sizes().vec()}, {"dtype", std::string(c10::toString(t.scalar_type()))}});
  const std::string text = manifest.dump(2) + "\n";
  io::AtomicFile file(r.manifest);
  file.write(text.data(), text.size());
  file.commit();
  return r;
}

}  // namespace halo::train
