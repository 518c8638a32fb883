// Records an export as an artifact of the run whose checkpoint it came from, in the run
// history (if the history file exists and knows the run).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "train/Export.h"

namespace halo::launch {

// The run's id when recorded; nullopt when no history file or no run owns the checkpoint.
std::optional<int64_t> record_export_in_history(const std::string& db_path, const std::string& checkpoint,
                                                const train::ExportResult& result);

}  // namespace halo::launch
