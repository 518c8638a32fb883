// The run is found by its folder: <run>/checkpoints/step-N.pt belongs to the run whose
// run_dir is <run>. A short write transaction, like `halo runs tag`.
#include "launch/ExportHistory.h"

#include <filesystem>

#include "store/HistoryDb.h"

namespace halo::launch {

namespace fs = std::filesystem;

std::optional<int64_t> record_export_in_history(const std::string& db_path, const std::string& checkpoint,
                                                const train::ExportResult& result) {
  const std::string path = store::HistoryDb::resolve_path(db_path);
  if (!fs::exists(path)) return std::nullopt;
  std::error_code ec;
  const fs::path run_dir = fs::weakly_canonical(fs::path(checkpoint), ec).parent_path().parent_path();
  store::HistoryDb db(path, store::HistoryDb::Mode::Write);
  for (const auto& run : db.list_runs()) {
    if (run.run_dir.empty() || fs::weakly_canonical(fs::path(run.run_dir), ec) != run_dir) continue;
    db.record_artifact(run.id, "export", fs::absolute(result.output).string(), result.step);
    db.flush();
    return run.id;
  }
  return std::nullopt;
}

}  // namespace halo::launch
