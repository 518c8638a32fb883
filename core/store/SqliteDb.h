// One SQLite connection (RAII), opened read-only or read-write, with a busy timeout so a
// reader and the single writer never fail on each other's locks.
#pragma once

#include <cstdint>
#include <string>

#include "store/Statement.h"

struct sqlite3;

namespace halo::store {

class SqliteDb {
 public:
  SqliteDb(const std::string& path, bool read_only, bool create);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  void exec(const std::string& sql);
  Statement prepare(const std::string& sql) { return Statement(db_, sql); }
  int64_t pragma_int(const std::string& name);  // PRAGMA name
  int64_t scalar_int(const std::string& sql);   // first column of the first row (0 if none)
  int64_t last_insert_id() const;
  int changes() const;
  const std::string& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace halo::store
