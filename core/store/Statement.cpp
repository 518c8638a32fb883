// Prepared statements over the SQLite C API; SQLITE_BUSY is handled by the connection's
// busy timeout, every other failure throws with the statement's text.
#include "store/Statement.h"

#include <sqlite3.h>

#include "util/Error.h"

namespace halo::store {

namespace {
[[noreturn]] void fail(sqlite3* db, const std::string& sql) {
  const char* file = sqlite3_db_filename(db, "main");
  throw util::Error(std::string("history database ") + (file ? file : "?") + ": " + sqlite3_errmsg(db) +
                        " (in: " + sql.substr(0, 80) + ")",
                    "check the file is a Halo history database and the disk is writable");
}
}  // namespace

Statement::Statement(sqlite3* db, const std::string& sql) : db_(db), sql_(sql) {
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) fail(db, sql);
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_), sql_(std::move(o.sql_)) {
  o.stmt_ = nullptr;
}

Statement& Statement::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) fail(db_, sql_);
  return *this;
}
Statement& Statement::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) fail(db_, sql_);
  return *this;
}
Statement& Statement::bind(int i, const std::string& v) {
  if (sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK) fail(db_, sql_);
  return *this;
}
Statement& Statement::bind(int i, std::nullopt_t) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) fail(db_, sql_);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  fail(db_, sql_);
}

void Statement::run() {
  while (step()) {}
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Statement::get_int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::get_double(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Statement::get_text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : "";
}
std::optional<double> Statement::get_opt_double(int col) const {
  if (is_null(col)) return std::nullopt;
  return get_double(col);
}

}  // namespace halo::store
