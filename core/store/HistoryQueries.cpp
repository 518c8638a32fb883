// Read side of the history: the queries behind `halo runs list/show/compare/metrics`.
// Every query is one SELECT; a reader sees each batch the launcher commits.
#include <cmath>

#include "store/HistoryDb.h"

namespace halo::store {

namespace {
const char* kRunColumns =
    "SELECT id, name, config, strategy, sp, dp, devices, status, start_time, end_time, exit_reason, host, "
    "halo_version, git_revision, last_step, launcher_pid, run_dir FROM runs";
}  // namespace

RunRecord HistoryDb::read_run(Statement& s) {
  RunRecord r;
  r.id = s.get_int(0);
  r.name = s.get_text(1);
  r.config = s.get_text(2);
  r.strategy = s.get_text(3);
  r.sp = static_cast<int>(s.get_int(4));
  r.dp = static_cast<int>(s.get_int(5));
  r.devices = s.get_text(6);
  r.status = parse_run_status(s.get_text(7)).value_or(RunStatus::Scheduled);
  r.start_time = s.get_opt_double(8);
  r.end_time = s.get_opt_double(9);
  r.exit_reason = s.get_text(10);
  r.host = s.get_text(11);
  r.halo_version = s.get_text(12);
  r.git_revision = s.get_text(13);
  if (!s.is_null(14)) r.last_step = s.get_int(14);
  if (!s.is_null(15)) r.launcher_pid = s.get_int(15);
  r.run_dir = s.get_text(16);
  return r;
}

std::vector<RunRecord> HistoryDb::list_runs(std::optional<RunStatus> status, std::optional<std::string> tag) {
  std::string sql = std::string(kRunColumns) +
                    " WHERE (?1 IS NULL OR status=?1) AND "
                    "(?2 IS NULL OR id IN (SELECT run_id FROM tags WHERE tag=?2)) ORDER BY id";
  Statement s = db_->prepare(sql);
  if (status) s.bind(1, to_string(*status));
  if (tag) s.bind(2, *tag);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  for (auto& r : out) r.tags = tags(r.id);
  return out;
}

std::optional<RunRecord> HistoryDb::run(int64_t id) {
  Statement s = db_->prepare(std::string(kRunColumns) + " WHERE id=?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  RunRecord r = read_run(s);
  r.tags = tags(id);
  return r;
}

std::vector<MetricPoint> HistoryDb::metrics(int64_t run, std::optional<std::string> key) {
  Statement s = db_->prepare(
      "SELECT step, key, value FROM metrics WHERE run_id=?1 AND (?2 IS NULL OR key=?2) ORDER BY key, step");
  s.bind(1, run);
  if (key) s.bind(2, *key);
  std::vector<MetricPoint> out;
  while (s.step()) out.push_back({s.get_int(0), s.get_text(1), s.get_opt_double(2)});
  return out;
}

std::vector<MetricSummary> HistoryDb::metric_summaries(int64_t run) {
  std::vector<MetricSummary> out;
  for (const MetricPoint& p : metrics(run)) {
    if (out.empty() || out.back().key != p.key) out.push_back({p.key});
    MetricSummary& m = out.back();
    ++m.points;
    m.last = p.value;
    m.last_step = p.step;
    if (!p.value) {
      ++m.nans;
      continue;
    }
    if (!m.best || *p.value < *m.best) m.best = p.value, m.best_step = p.step;
  }
  return out;
}

std::vector<RankPeak> HistoryDb::rank_peaks(int64_t run) {
  Statement s = db_->prepare(
      "SELECT rank, MAX(mem_peak), MAX(mem_reserved), MAX(rss), AVG(total_ms) FROM samples WHERE run_id=? "
      "GROUP BY rank ORDER BY rank");
  s.bind(1, run);
  std::vector<RankPeak> out;
  while (s.step())
    out.push_back({static_cast<int>(s.get_int(0)), s.get_int(1), s.get_int(2), s.get_int(3), s.get_double(4)});
  return out;
}

std::optional<double> HistoryDb::mean_step_ms(int64_t run) {
  Statement s = db_->prepare("SELECT AVG(total_ms) FROM samples WHERE run_id=? AND rank=0");
  s.bind(1, run);
  return s.step() ? s.get_opt_double(0) : std::nullopt;
}

int64_t HistoryDb::metric_rows(int64_t run) {
  Statement s = db_->prepare("SELECT COUNT(*) FROM metrics WHERE run_id=?");
  s.bind(1, run);
  return s.step() ? s.get_int(0) : 0;
}

std::optional<nlohmann::json> HistoryDb::layout(int64_t run) {
  Statement s = db_->prepare("SELECT json FROM layouts WHERE run_id=?");
  s.bind(1, run);
  if (!s.step()) return std::nullopt;
  return nlohmann::json::parse(s.get_text(0), nullptr, false);
}

std::vector<EventRecord> HistoryDb::events(int64_t run) {
  Statement s = db_->prepare("SELECT rank, kind, json, time FROM events WHERE run_id=? ORDER BY id");
  s.bind(1, run);
  std::vector<EventRecord> out;
  while (s.step())
    out.push_back({s.is_null(0) ? std::nullopt : std::optional<int>(static_cast<int>(s.get_int(0))), s.get_text(1),
                   s.get_text(2), s.get_double(3)});
  return out;
}

std::vector<ArtifactRecord> HistoryDb::artifacts(int64_t run) {
  Statement s = db_->prepare("SELECT kind, path, sha256, step, bytes FROM artifacts WHERE run_id=? ORDER BY id");
  s.bind(1, run);
  std::vector<ArtifactRecord> out;
  while (s.step()) {
    ArtifactRecord a{s.get_text(0), s.get_text(1), s.get_text(2)};
    if (!s.is_null(3)) a.step = s.get_int(3);
    if (!s.is_null(4)) a.bytes = s.get_int(4);
    out.push_back(a);
  }
  return out;
}

std::vector<NoteRecord> HistoryDb::notes(int64_t run) {
  Statement s = db_->prepare("SELECT time, text FROM notes WHERE run_id=? ORDER BY id");
  s.bind(1, run);
  std::vector<NoteRecord> out;
  while (s.step()) out.push_back({s.get_double(0), s.get_text(1)});
  return out;
}

std::vector<std::string> HistoryDb::tags(int64_t run) {
  Statement s = db_->prepare("SELECT tag FROM tags WHERE run_id=? ORDER BY tag");
  s.bind(1, run);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.get_text(0));
  return out;
}

}  // namespace halo::store
