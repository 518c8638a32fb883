// One list_runs per reload; folders compared as absolute clean paths.
#include "RunIndex.h"

#include <QDir>

#include <filesystem>

#include "store/HistoryDb.h"

namespace halo::gui {

namespace {
QString key_of(const QString& dir) { return QDir::cleanPath(QDir(dir).absolutePath()); }
}  // namespace

std::optional<int64_t> RunIndex::id_of(const QString& run_dir) {
  if (run_dir.isEmpty()) return std::nullopt;
  const QString key = key_of(run_dir);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  if (since_reload_.isValid() && since_reload_.elapsed() < 2000) return std::nullopt;
  reload();
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  return std::nullopt;
}

void RunIndex::reload() {
  since_reload_.start();
  const std::string path = store::HistoryDb::resolve_path(db_path.toStdString());
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  try {
    store::HistoryDb db(path, store::HistoryDb::Mode::Read);
    for (const auto& r : db.list_runs()) ids_[key_of(QString::fromStdString(r.run_dir))] = r.id;
  } catch (const std::exception&) {  // no readable history: runs are named without ids
  }
}

}  // namespace halo::gui
