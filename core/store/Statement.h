// One prepared SQLite statement (RAII): bind by 1-based index, step rows, read columns.
// Errors become util::Error naming the database file and the SQL.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace halo::store {

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql);
  ~Statement();
  Statement(Statement&& o) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;

  Statement& bind(int i, int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, const std::string& v);
  Statement& bind(int i, const char* v) { return bind(i, std::string(v)); }
  Statement& bind(int i, std::nullopt_t);
  Statement& bind(int i, const std::optional<double>& v) { return v ? bind(i, *v) : bind(i, std::nullopt); }

  bool step();  // true while a row is available
  void run();   // step to the end, then reset for reuse
  void reset();

  bool is_null(int col) const;
  int64_t get_int(int col) const;
  double get_double(int col) const;
  std::string get_text(int col) const;
  std::optional<double> get_opt_double(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

}  // namespace halo::store
