// Opening the history: resolve the path, look at the file read-only (SQLite header,
// application_id, user_version) before writing anything, migrate forward, recover runs.
#include "store/HistoryDb.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "store/HistoryWriter.h"
#include "store/Migrations.h"
#include "util/Error.h"

namespace halo::store {

namespace fs = std::filesystem;

std::string to_string(RunStatus s) {
  switch (s) {
    case RunStatus::Scheduled:
      return "SCHEDULED";
    case RunStatus::Running:
      return "RUNNING";
    case RunStatus::Finished:
      return "FINISHED";
    case RunStatus::Failed:
      return "FAILED";
    case RunStatus::Killed:
      return "KILLED";
    case RunStatus::Interrupted:
      return "INTERRUPTED";
  }
  return "?";
}

std::optional<RunStatus> parse_run_status(const std::string& s) {
  std::string up = s;
  for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (RunStatus r : {RunStatus::Scheduled, RunStatus::Running, RunStatus::Finished, RunStatus::Failed,
                      RunStatus::Killed, RunStatus::Interrupted})
    if (to_string(r) == up) return r;
  return std::nullopt;
}

std::string HistoryDb::resolve_path(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* e = std::getenv("HALO_DB"); e && *e) return e;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return (fs::path(x) / "halo" / "history.db").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".local" / "share" / "halo" / "history.db").string();
}

HistoryDb::HistoryDb(const std::string& path, Mode mode) : path_(path), mode_(mode) {
  check_file(path, mode);
  if (mode == Mode::Write) {
    if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
    db_ = std::make_unique<SqliteDb>(path, /*read_only=*/false, /*create=*/true);
    db_->exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;");
    migrate();
    mark_interrupted();
    w_ = std::make_unique<Writer>(*db_);
    return;
  }
  // A reader writes only to bring an old schema forward or to close runs of dead launchers.
  {
    SqliteDb ro(path, /*read_only=*/true, false);
    const bool old = ro.pragma_int("user_version") < current_schema_version();
    if (old || !dead_runs(ro).empty()) {
      db_ = std::make_unique<SqliteDb>(path, false, false);
      db_->exec("PRAGMA foreign_keys=ON;");
      if (old) migrate();
      mark_interrupted();
    }
  }
  db_ = std::make_unique<SqliteDb>(path, /*read_only=*/true, false);
}

HistoryDb::~HistoryDb() {
  try {
    if (w_) flush();
  } catch (...) {}
}

void HistoryDb::check_file(const std::string& path, Mode mode) {
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (!exists || (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == 0)) {
    if (mode == Mode::Write) return;
    throw util::Error(fmt::format("no run history at {}", path),
                      "runs are recorded by `halo launch`; or point --db / HALO_DB at a history file");
  }
  if (!fs::is_regular_file(path, ec))
    throw util::Error(fmt::format("history database {} is not a regular file", path), "give --db a file path");
  char head[16] = {0};
  std::ifstream(path, std::ios::binary).read(head, sizeof head);
  if (std::memcmp(head, "SQLite format 3", 16) != 0)
    throw util::Error(fmt::format("{} is not a SQLite database (corrupt or another kind of file); refusing to use it "
                                  "as Halo's run history, and leaving it untouched",
                                  path),
                      "give --db (or HALO_DB) a Halo history file or a new path");
  int64_t app = 0, version = 0, objects = 0;
  try {
    SqliteDb ro(path, /*read_only=*/true, false);
    app = ro.pragma_int("application_id");
    version = ro.pragma_int("user_version");
    objects = ro.scalar_int("SELECT COUNT(*) FROM sqlite_master");
  } catch (const util::Error& e) {
    throw util::Error(fmt::format("{} is a corrupt SQLite database ({}); refusing to use it, leaving it untouched",
                                  path, e.problem()),
                      "give --db (or HALO_DB) a Halo history file or a new path");
  }
  if (app == 0 && objects == 0 && version == 0) return;  // an empty SQLite file: ours to fill
  if (app != kApplicationId)
    throw util::Error(fmt::format("{} is a SQLite database but not a Halo run history (application_id 0x{:08x}, {} "
                                  "schema objects); refusing to use it, leaving it untouched",
                                  path, static_cast<uint32_t>(app), objects),
                      "give --db (or HALO_DB) a Halo history file or a new path");
  if (version > current_schema_version())
    throw util::Error(fmt::format("{} has history schema version {}, newer than this Halo's {}", path, version,
                                  current_schema_version()),
                      "use the newer halo that wrote it, or another --db");
}

void HistoryDb::migrate() {
  db_->exec("BEGIN IMMEDIATE");
  try {
    const int64_t from = db_->pragma_int("user_version");
    if (from == 0) db_->exec(fmt::format("PRAGMA application_id={}", kApplicationId));
    for (int v = static_cast<int>(from); v < current_schema_version(); ++v) {
      db_->exec(migrations()[static_cast<size_t>(v)]);
      db_->exec(fmt::format("PRAGMA user_version={}", v + 1));
    }
    db_->exec("COMMIT");
  } catch (...) {
    db_->exec("ROLLBACK");
    throw;
  }
}

int HistoryDb::schema_version() { return static_cast<int>(db_->pragma_int("user_version")); }

std::vector<std::pair<int64_t, int64_t>> HistoryDb::dead_runs(SqliteDb& db) {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  std::vector<std::pair<int64_t, int64_t>> dead;
  Statement s = db.prepare("SELECT id, launcher_pid FROM runs WHERE status='RUNNING' AND host=?");
  s.bind(1, std::string(host));
  while (s.step()) {
    const auto pid = static_cast<pid_t>(s.is_null(1) ? 0 : s.get_int(1));
    if (pid <= 0 || (::kill(pid, 0) != 0 && errno == ESRCH)) dead.emplace_back(s.get_int(0), pid);
  }
  return dead;
}

int HistoryDb::mark_interrupted() {
  const auto dead = dead_runs(*db_);
  for (const auto& [id, pid] : dead) {
    Statement u = db_->prepare(
        "UPDATE runs SET status='INTERRUPTED', end_time=COALESCE(end_time, ?2), exit_reason=?3, "
        "last_step=(SELECT MAX(s) FROM (SELECT last_step AS s FROM runs WHERE id=?1 "
        "UNION ALL SELECT MAX(step) FROM metrics WHERE run_id=?1)) "
        "WHERE id=?1 AND status='RUNNING'");
    u.bind(1, id)
        .bind(2, Writer::now())
        .bind(3, fmt::format("the launcher (pid {}) ended without finishing the run", pid));
    u.run();
  }
  return static_cast<int>(dead.size());
}

void HistoryDb::add_tag(int64_t run, const std::string& tag) {
  Statement s = db_->prepare("INSERT OR IGNORE INTO tags(run_id, tag) VALUES(?, ?)");
  s.bind(1, run).bind(2, tag).run();
}

void HistoryDb::add_note(int64_t run, const std::string& text) {
  Statement s = db_->prepare("INSERT INTO notes(run_id, time, text) VALUES(?, ?, ?)");
  s.bind(1, run).bind(2, Writer::now()).bind(3, text).run();
}

void HistoryDb::check_deletable(int64_t run) {
  // Opening for writing has marked this host's dead launchers' runs INTERRUPTED: a run still
  // RUNNING has a live launcher here, or runs on another host. Its rows are still being written.
  if (const auto r = this->run(run); r && r->status == RunStatus::Running)
    throw util::Error(fmt::format("run {} ({}) is RUNNING (launcher pid {} on {}); nothing deleted", run, r->name,
                                  r->launcher_pid.value_or(0), r->host),
                      fmt::format("stop it first (Ctrl-C in its terminal, or kill -INT {}), then delete it",
                                  r->launcher_pid.value_or(0)));
}

bool HistoryDb::delete_run(int64_t run) {
  check_deletable(run);
  Statement s = db_->prepare("DELETE FROM runs WHERE id=?");
  s.bind(1, run).run();
  return db_->changes() > 0;
}

}  // namespace halo::store
