// HistoryDb's writer state (internal to core/store): cached insert statements and the open
// batch transaction, committed every batch_interval or batch_rows rows.
#pragma once

#include <chrono>
#include <map>

#include "store/HistoryDb.h"

namespace halo::store {

struct HistoryDb::Writer {
  explicit Writer(SqliteDb& db);
  static double now();  // Unix seconds

  Statement metric, sample, event, evaluation, layout, artifact, last_step;
  bool in_tx = false;
  int rows = 0;
  std::chrono::steady_clock::time_point batch_start;
  std::map<int64_t, int64_t> steps;                       // run -> last step seen
  std::map<int64_t, std::map<int, std::string>> devices;  // run -> rank -> device
};

}  // namespace halo::store
