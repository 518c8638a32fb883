// The run history: one SQLite file (WAL, foreign keys on), written by the launcher alone
// and read by `halo runs` and the workbench. Opening checks it is Halo's before writing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/EventLine.h"
#include "store/RunRecord.h"
#include "store/SqliteDb.h"

namespace halo::store {

class HistoryDb {
 public:
  enum class Mode { Read, Write };

  // --db PATH if given, else $HALO_DB, else $XDG_DATA_HOME/halo/history.db, else
  // ~/.local/share/halo/history.db.
  static std::string resolve_path(const std::string& given);
  // A read-only look before anything is written: throws unless `path` is a Halo history (or,
  // for Write, missing/empty and so ours to create). Leaves the file untouched.
  static void check_file(const std::string& path, Mode mode);

  // Refuses (util::Error naming the file, file untouched) anything that is not SQLite, a
  // SQLite file without Halo's application_id, or a newer schema. Write creates the file
  // and migrates it; Read opens SQLITE_OPEN_READONLY and throws if the file is missing.
  // Both first mark RUNNING runs of dead launchers on this host INTERRUPTED.
  HistoryDb(const std::string& path, Mode mode);
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  const std::string& path() const { return path_; }
  int schema_version();

  // ---- writer (the launcher): rows are batched in transactions ----
  int64_t begin_run(const nlohmann::json& config, const std::string& run_dir);
  // Worker events, as the launcher tagged them: step -> metrics (rank 0: StepEvent::metrics())
  // and a memory/timing sample (every rank); layout; checkpoint -> artifact; eval ->
  // evaluations (rank 0: eval/<score> metrics); hello/error/done/log, unknown and malformed
  // lines -> events (kind: the line's event name).
  void record_event(int64_t run, const protocol::EventLine& line);
  // The same for a line held as JSON: read by the protocol, with `rank` as its rank.
  void record_event(int64_t run, int rank, const nlohmann::json& event);
  void record_artifact(int64_t run, const std::string& kind, const std::string& path, std::optional<int64_t> step);
  void tick();   // commits when the open batch is older than batch_interval
  void flush();  // commits now
  void finish_run(int64_t run, RunStatus status, const std::string& reason);
  std::chrono::milliseconds batch_interval{200};
  int batch_rows = 500;

  // ---- user edits ----
  void add_tag(int64_t run, const std::string& tag);
  void add_note(int64_t run, const std::string& text);
  bool delete_run(int64_t run);  // rows only; never files on disk. Calls check_deletable first
  // util::Error (naming the launcher) for a RUNNING run: its launcher still writes its rows.
  void check_deletable(int64_t run);
  int mark_interrupted();  // RUNNING runs of dead launchers on this host

  // ---- queries ----
  std::vector<RunRecord> list_runs(std::optional<RunStatus> status = {}, std::optional<std::string> tag = {});
  std::optional<RunRecord> run(int64_t id);
  std::vector<MetricPoint> metrics(int64_t run, std::optional<std::string> key = {});
  std::vector<MetricSummary> metric_summaries(int64_t run);
  std::vector<RankPeak> rank_peaks(int64_t run);
  std::optional<double> mean_step_ms(int64_t run);  // rank 0
  RunSummary summary(int64_t run);                  // index lookups, plus one pass over its samples
  int64_t metric_rows(int64_t run);
  std::optional<nlohmann::json> layout(int64_t run);
  std::vector<EventRecord> events(int64_t run);
  std::vector<ArtifactRecord> artifacts(int64_t run);
  std::vector<NoteRecord> notes(int64_t run);
  std::vector<std::string> tags(int64_t run);

 private:
  struct Writer;
  void migrate();  // to current_schema_version()
  void begin_batch();
  void add_metric(int64_t run, int64_t step, const std::string& key, double v);  // NaN: NULL, is_nan
  void update_devices(int64_t run, int rank, const protocol::HelloEvent& hello);
  void record_step(int64_t run, int rank, const protocol::StepEvent& e);
  void record_eval(int64_t run, int rank, const protocol::EvalEvent& e, const std::string& json);
  RunRecord read_run(Statement& s);
  static std::vector<std::pair<int64_t, int64_t>> dead_runs(SqliteDb& db);  // (run, launcher pid)

  std::string path_;
  Mode mode_;
  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<Writer> w_;
};

}  // namespace halo::store
