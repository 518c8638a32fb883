// `halo bench store`: the history's write rate with a reader polling it at the same time,
// emulating 8 ranks that log every step. A measurement, never a timed test.
#pragma once

#include <cstdint>
#include <string>

namespace halo::store {

struct StoreBenchOptions {
  int64_t metric_rows = 100000;
  int ranks = 8;
  std::string db_path;  // empty: a temporary file, removed afterwards
};

struct StoreBenchReport {
  int64_t metric_rows = 0, sample_rows = 0, steps = 0;
  double seconds = 0, rows_per_s = 0;
  int64_t reader_polls = 0, reader_rows_seen = 0;
  double reader_worst_wait_ms = 0, reader_mean_wait_ms = 0;
};

StoreBenchReport run_store_bench(const StoreBenchOptions& o);

}  // namespace halo::store
