// Run ids by run folder, read from the history (read-only) and cached, so plots and the
// title can name a run "#12 tiny" as History does.
#pragma once

#include <QElapsedTimer>
#include <QString>

#include <cstdint>
#include <map>
#include <optional>

namespace halo::gui {

class RunIndex {
 public:
  QString db_path;  // empty: $HALO_DB or the default history file
  // The id of the run in `run_dir`; folders not found re-read the history at most every 2 s
  // (a run just launched gets its row a moment later).
  std::optional<int64_t> id_of(const QString& run_dir);

 private:
  void reload();
  std::map<QString, int64_t> ids_;
  QElapsedTimer since_reload_;
};

}  // namespace halo::gui
