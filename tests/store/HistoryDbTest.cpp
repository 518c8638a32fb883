// Opening the history: new files get Halo's application_id and the current schema, old
// schemas migrate, corrupt/foreign/newer files are refused and left byte-for-byte intact.
#include <gtest/gtest.h>

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "StoreTestSupport.h"
#include "store/HistoryDb.h"
#include "store/Migrations.h"
#include "store/Sha256.h"
#include "util/Error.h"

namespace halo::store {
namespace {

namespace fs = std::filesystem;

std::string temp_db(const std::string& tag) { return store::temp_db("store", tag); }

std::string bytes_of(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path, std::ios::binary).rdbuf();
  return s.str();
}

void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

std::string refusal(const std::string& path, HistoryDb::Mode mode) {
  try {
    HistoryDb db(path, mode);
  } catch (const util::Error& e) {
    return e.what();
  }
  return "";
}

TEST(StoreOpen, NewFileGetsApplicationIdWalAndCurrentSchema) {
  const std::string path = temp_db("new");
  {
    HistoryDb db(path, HistoryDb::Mode::Write);
    EXPECT_EQ(db.schema_version(), current_schema_version());
    EXPECT_GE(current_schema_version(), 2);
  }
  SqliteDb ro(path, true, false);
  EXPECT_EQ(ro.pragma_int("application_id"), kApplicationId);
  EXPECT_EQ(ro.pragma_int("user_version"), current_schema_version());
  Statement s = ro.prepare("PRAGMA journal_mode");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.get_text(0), "wal");
}

TEST(StoreOpen, ResolvePathHonoursFlagEnvAndXdg) {
  ::setenv("HALO_DB", "/tmp/from-env.db", 1);
  EXPECT_EQ(HistoryDb::resolve_path("/x/flag.db"), "/x/flag.db");
  EXPECT_EQ(HistoryDb::resolve_path(""), "/tmp/from-env.db");
  ::unsetenv("HALO_DB");
  ::setenv("XDG_DATA_HOME", "/data/xdg", 1);
  EXPECT_EQ(HistoryDb::resolve_path(""), "/data/xdg/halo/history.db");
  ::unsetenv("XDG_DATA_HOME");
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(HistoryDb::resolve_path(""), "/home/someone/.local/share/halo/history.db");
}

TEST(StoreOpen, VersionOneDatabaseMigratesKeepingItsRuns) {
  const std::string path = temp_db("v1");
  // A database exactly as the first schema wrote it, with one finished run.
  raw_exec(path, "PRAGMA journal_mode=WAL; PRAGMA application_id=" + std::to_string(kApplicationId) + ";" +
                     migrations()[0] + "PRAGMA user_version=1;" +
                     "INSERT INTO runs(name, config, status, last_step) VALUES('old', '{}', 'FINISHED', 41);"
                     "INSERT INTO metrics(run_id, step, key, value) VALUES(1, 41, 'loss', 0.5);");
  {
    HistoryDb reader(path, HistoryDb::Mode::Read);  // readers bring the schema forward too
    EXPECT_EQ(reader.schema_version(), current_schema_version());
    auto r = reader.run(1);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->name, "old");
    EXPECT_EQ(r->steps(), 42);
    EXPECT_EQ(r->run_dir, "");  // the column version 2 added
    EXPECT_EQ(reader.metric_rows(1), 1);
  }
  HistoryDb db(path, HistoryDb::Mode::Write);
  const int64_t id = db.begin_run({{"name", "new"}}, "/runs/new");
  EXPECT_EQ(db.run(id)->run_dir, "/runs/new");
}

TEST(StoreOpen, VersionTwoArtifactsSurviveAndPretrainedFilesCanBeRecorded) {
  const std::string path = temp_db("v2");
  raw_exec(path, "PRAGMA journal_mode=WAL; PRAGMA application_id=" + std::to_string(kApplicationId) + ";" +
                     migrations()[0] + migrations()[1] + "PRAGMA user_version=2;" +
                     "INSERT INTO runs(name, config, status) VALUES('old', '{}', 'FINISHED');"
                     "INSERT INTO artifacts(run_id, kind, step, path, bytes, sha256, time) "
                     "VALUES(1, 'checkpoint', 5, '/runs/old/checkpoints/step-000005.pt', 123, 'abc', 1.0);");
  HistoryDb db(path, HistoryDb::Mode::Write);
  EXPECT_EQ(db.schema_version(), current_schema_version());
  auto arts = db.artifacts(1);
  ASSERT_EQ(arts.size(), 1u);
  EXPECT_EQ(arts[0].kind, "checkpoint");
  EXPECT_EQ(arts[0].path, "/runs/old/checkpoints/step-000005.pt");
  EXPECT_EQ(arts[0].sha256, "abc");
  const std::string weights = path + ".weights";
  std::ofstream(weights) << "abc";
  const int64_t id = db.begin_run({{"name", "new"}}, "/runs/new");
  db.record_artifact(id, "pretrained", weights, std::nullopt);
  db.flush();
  arts = db.artifacts(id);
  ASSERT_EQ(arts.size(), 1u);
  EXPECT_EQ(arts[0].kind, "pretrained");
  // SHA-256("abc"), the FIPS 180-2 example.
  EXPECT_EQ(arts[0].sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(StoreOpen, VersionZeroHaloFileMigratesToCurrent) {
  const std::string path = temp_db("v0");
  raw_exec(path, "PRAGMA application_id=" + std::to_string(kApplicationId) + "; CREATE TABLE scratch(x);");
  HistoryDb db(path, HistoryDb::Mode::Write);
  EXPECT_EQ(db.schema_version(), current_schema_version());
  EXPECT_TRUE(db.list_runs().empty());
}

TEST(StoreOpen, CorruptFileIsRefusedAndUntouched) {
  const std::string path = temp_db("corrupt");
  std::ofstream(path, std::ios::binary) << "this is not a database\n" << std::string(5000, 'x');
  const std::string before = bytes_of(path);
  for (auto mode : {HistoryDb::Mode::Write, HistoryDb::Mode::Read}) {
    const std::string msg = refusal(path, mode);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a SQLite database"), std::string::npos) << msg;
  }
  EXPECT_EQ(bytes_of(path), before);
  EXPECT_FALSE(fs::exists(path + "-wal"));
}

TEST(StoreOpen, DamagedSqliteFileIsRefusedAndUntouched) {
  const std::string path = temp_db("damaged");
  raw_exec(path, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  std::string b = bytes_of(path);
  for (size_t i = 16; i < b.size(); ++i) b[i] = static_cast<char>(0xA5);  // header kept, the rest garbage
  std::ofstream(path, std::ios::binary | std::ios::trunc) << b;
  const std::string msg = refusal(path, HistoryDb::Mode::Write);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_EQ(bytes_of(path), b);
}

TEST(StoreOpen, ForeignSqliteFileIsRefusedAndUntouched) {
  const std::string path = temp_db("foreign");
  raw_exec(path, "CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos(name) VALUES('cat');");
  const std::string before = bytes_of(path);
  for (auto mode : {HistoryDb::Mode::Write, HistoryDb::Mode::Read}) {
    const std::string msg = refusal(path, mode);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a Halo run history"), std::string::npos) << msg;
  }
  EXPECT_EQ(bytes_of(path), before);
}

TEST(StoreOpen, NewerSchemaIsRefused) {
  const std::string path = temp_db("newer");
  raw_exec(path, "PRAGMA application_id=" + std::to_string(kApplicationId) + "; PRAGMA user_version=99;");
  const std::string before = bytes_of(path);
  EXPECT_NE(refusal(path, HistoryDb::Mode::Write).find("newer"), std::string::npos);
  EXPECT_EQ(bytes_of(path), before);
}

TEST(StoreOpen, MissingFileIsAnErrorForReaders) {
  const std::string path = temp_db("missing");
  EXPECT_NE(refusal(path, HistoryDb::Mode::Read).find("no run history"), std::string::npos);
  EXPECT_FALSE(fs::exists(path));
}

TEST(StoreSha256, StandardVectors) {
  EXPECT_EQ(Sha256::of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace halo::store
