// `halo export CHECKPOINT -o FILE [--format safetensors|torch] [--force] [--json]`: plain tensors
// that PyTorch and timm load directly; never over the checkpoint, a checkpoint or the history.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "Commands.h"
#include "launch/ExportHistory.h"
#include "store/HistoryDb.h"
#include "train/Export.h"

namespace halo::app {

void add_export_commands(CLI::App& app) {
  auto o = std::make_shared<train::ExportOptions>();
  auto json = std::make_shared<bool>(false);
  auto db = std::make_shared<std::string>();
  auto* e = app.add_subcommand("export", "Export a checkpoint as plain tensors (safetensors or torch.load file)");
  e->add_option("checkpoint", o->checkpoint, "a checkpoint of a run: <run>/checkpoints/step-*.pt")->required();
  e->add_option("-o,--output", o->output, "output file, e.g. model.safetensors")->required();
  e->add_option("--format", o->format, "safetensors or torch")->capture_default_str();
  e->add_flag("--json", *json, "print the result as JSON");
  e->add_flag("--force", o->force, "replace an existing output file (never a checkpoint or the run history)");
  e->add_option("--db", *db,
                "run history to record the export in (default: $HALO_DB, else ~/.local/share/halo/history.db)");
  e->callback([o, json, db]() {
    o->keep = {store::HistoryDb::resolve_path(*db)};
    const train::ExportResult r = train::export_checkpoint(*o);
    const auto run = launch::record_export_in_history(*db, o->checkpoint, r);
    if (*json) {
      std::printf("%s\n", nlohmann::json{{"output", r.output},
                                         {"manifest", r.manifest},
                                         {"arch", r.arch},
                                         {"step", r.step},
                                         {"tensors", r.tensors},
                                         {"bytes", r.bytes},
                                         {"history_run", run ? nlohmann::json(*run) : nlohmann::json()}}
                              .dump(2)
                              .c_str());
    } else {
      std::printf("exported %s (step %lld): %zu tensors, %lld bytes -> %s (manifest %s)\n", r.arch.c_str(),
                  static_cast<long long>(r.step), r.tensors, static_cast<long long>(r.bytes), r.output.c_str(),
                  r.manifest.c_str());
      if (run) std::printf("recorded as an artifact of run %lld in the history\n", static_cast<long long>(*run));
    }
  });
}

}  // namespace halo::app
