// Opening a connection and running plain SQL. Every failure names the file.
// Busy timeout 10 s: the writer commits in short batches, so waits stay in milliseconds.
#include "store/SqliteDb.h"

#include <sqlite3.h>

#include "util/Error.h"

namespace halo::store {

SqliteDb::SqliteDb(const std::string& path, bool read_only, bool create) : path_(path) {
  const int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)) |
                    SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw util::Error("cannot open history database " + path + ": " + msg,
                      "check the path and its permissions, or choose another file with --db or HALO_DB");
  }
  sqlite3_busy_timeout(db_, 10000);
  sqlite3_extended_result_codes(db_, 1);
}

SqliteDb::~SqliteDb() {
  if (db_) sqlite3_close_v2(db_);
}

void SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw util::Error("history database " + path_ + ": " + msg + " (in: " + sql.substr(0, 80) + ")",
                      "check the file is a Halo history database and the disk is writable");
  }
}

int64_t SqliteDb::pragma_int(const std::string& name) { return scalar_int("PRAGMA " + name); }

int64_t SqliteDb::scalar_int(const std::string& sql) {
  Statement s = prepare(sql);
  return s.step() ? s.get_int(0) : 0;
}

int64_t SqliteDb::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
int SqliteDb::changes() const { return sqlite3_changes(db_); }

}  // namespace halo::store
