// The runs table's figures per run: the last loss and the best score come from the metrics
// index (run, key, step); the peak and the mean step time from the run's samples.
#include "store/HistoryDb.h"

namespace halo::store {

RunSummary HistoryDb::summary(int64_t run) {
  RunSummary out;
  Statement loss = db_->prepare("SELECT value FROM metrics WHERE run_id=? AND key='loss' ORDER BY step DESC LIMIT 1");
  loss.bind(1, run);
  if (loss.step()) out.final_loss = loss.get_opt_double(0);
  Statement score = db_->prepare("SELECT MAX(value) FROM metrics WHERE run_id=? AND key='eval/OLS'");
  score.bind(1, run);
  if (score.step()) out.best_score = score.get_opt_double(0);
  Statement mem =
      db_->prepare("SELECT MAX(mem_peak), AVG(CASE WHEN rank=0 THEN total_ms END) FROM samples WHERE run_id=?");
  mem.bind(1, run);
  if (mem.step()) {
    if (!mem.is_null(0)) out.peak_bytes = mem.get_int(0);
    out.mean_step_ms = mem.get_opt_double(1);
  }
  return out;
}

}  // namespace halo::store
