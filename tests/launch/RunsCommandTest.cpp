// Run history end to end through the real CLI: `halo launch --db` records the run, `halo
// runs` reads it, a SIGKILLed launcher leaves it INTERRUPTED, foreign files are refused.
#include <gtest/gtest.h>

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "RunHelpers.h"
#include "store/HistoryDb.h"
#include "util/Error.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;
using store::HistoryDb;

// Every launch in this test binary records into a throw-away history, never the user's.
const bool kIsolatedHistory = [] {
  ::setenv("HALO_DB", (fs::temp_directory_path() / ("halo-launch-tests-" + std::to_string(::getpid()) + ".db")).c_str(),
           1);
  return true;
}();

std::string bytes_of(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path, std::ios::binary).rdbuf();
  return s.str();
}

nlohmann::json json_of(const CliResult& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

TEST(Runs, LaunchRecordsAFinishedRunThatRunsCommandsRead) {
  ASSERT_TRUE(kIsolatedHistory);
  const std::string dir = fresh_dir("runs-e2e");
  const std::string db = dir + "/h.db";
  CliResult a = run_halo("launch --no-progress " + write_experiment(dir, {}) + " --db " + db);
  ASSERT_EQ(a.code, 0) << a.out;
  CliResult l = run_halo("runs list --json --db " + db);
  ASSERT_EQ(l.code, 0) << l.out;
  const auto runs = json_of(l);
  ASSERT_EQ(runs.size(), 1u) << l.out;
  EXPECT_EQ(runs[0]["status"], "FINISHED");
  EXPECT_EQ(runs[0]["steps"], 5);
  EXPECT_EQ(runs[0]["name"], "test");
  const int64_t id = runs[0]["id"].get<int64_t>();

  // Metric rows = steps x keys of rank 0's step events.
  const auto steps = read_events(dir + "/run", "step", 0);
  ASSERT_EQ(steps.size(), 5u);
  const size_t keys = steps[0]["losses"].size() + 3 + steps[0]["time_ms"].size();
  HistoryDb h(db, HistoryDb::Mode::Read);
  EXPECT_EQ(h.metric_rows(id), static_cast<int64_t>(5 * keys));
  EXPECT_EQ(h.rank_peaks(id).size(), 2u);
  EXPECT_TRUE(h.layout(id).has_value());

  CliResult show = run_halo("runs show " + std::to_string(id) + " --json --db " + db);
  ASSERT_EQ(show.code, 0) << show.out;
  const auto s = json_of(show);
  ASSERT_EQ(s["artifacts"].size(), 1u) << show.out;
  EXPECT_EQ(s["artifacts"][0]["kind"], "checkpoint");
  EXPECT_EQ(s["artifacts"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(s["ranks"].size(), 2u);
  EXPECT_EQ(s["config"]["parallel"]["sp"], 2);

  // An export of the run's checkpoint is recorded as its artifact too.
  CliResult ex = run_halo("export " + dir + "/run/checkpoints/step-000005.pt -o " + dir + "/m.safetensors --db " + db);
  ASSERT_EQ(ex.code, 0) << ex.out;
  const auto s2 = json_of(run_halo("runs show " + std::to_string(id) + " --json --db " + db));
  ASSERT_EQ(s2["artifacts"].size(), 2u) << s2.dump();
  EXPECT_EQ(s2["artifacts"][1]["kind"], "export");
  EXPECT_EQ(s2["artifacts"][1]["sha256"].get<std::string>().size(), 64u);

  CliResult csv = run_halo("runs metrics " + std::to_string(id) + " --key loss --csv --db " + db);
  ASSERT_EQ(csv.code, 0) << csv.out;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 6) << csv.out;
  EXPECT_EQ(csv.out.rfind("step,key,value\n", 0), 0u) << csv.out;

  // A second run with another learning rate: compare names the difference.
  const std::string dir2 = fresh_dir("runs-e2e-b");
  CliResult b =
      run_halo("launch --no-progress " + write_experiment(dir2, {{"optim", {{"lr", 0.001}}}}) + " --db " + db);
  ASSERT_EQ(b.code, 0) << b.out;
  CliResult cmp = run_halo("runs compare 1 2 --json --db " + db);
  ASSERT_EQ(cmp.code, 0) << cmp.out;
  const auto c = json_of(cmp);
  EXPECT_TRUE(c["config_differences"].contains("optim.lr")) << cmp.out;
  EXPECT_TRUE(c["runs"][0]["metrics"].contains("loss"));
  EXPECT_EQ(c["runs"][1]["peak_bytes_per_rank"].size(), 2u);

  EXPECT_EQ(run_halo("runs tag 2 lowlr --db " + db).code, 0);
  EXPECT_EQ(run_halo("runs note 2 'smaller lr' --db " + db).code, 0);
  const auto tagged = json_of(run_halo("runs list --tag lowlr --json --db " + db));
  ASSERT_EQ(tagged.size(), 1u);
  EXPECT_EQ(tagged[0]["id"], 2);
  EXPECT_EQ(run_halo("runs delete 2 --db " + db + " < /dev/null").code, 1);  // asked, no answer: kept
  EXPECT_EQ(json_of(run_halo("runs list --json --db " + db)).size(), 2u);
  EXPECT_EQ(run_halo("runs delete 2 --yes --db " + db).code, 0);
  EXPECT_EQ(json_of(run_halo("runs list --json --db " + db)).size(), 1u);
  EXPECT_TRUE(fs::exists(dir2 + "/run/config.json"));  // files on disk stay
  EXPECT_NE(run_halo("runs show 2 --db " + db).code, 0);
}

TEST(Runs, ARunningRunCannotBeDeleted) {
  const std::string dir = fresh_dir("runs-delete-running"), db = dir + "/history.db";
  int64_t id = 0;
  {
    HistoryDb h(db, HistoryDb::Mode::Write);  // a launcher that is alive: this test's own pid
    id = h.begin_run(nlohmann::json{{"name", "live"}}, dir + "/run");
  }
  for (const char* yes : {" --yes", ""}) {
    CliResult r = run_halo("runs delete " + std::to_string(id) + yes + " --db " + db + " < /dev/null");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("is RUNNING (launcher pid " + std::to_string(::getpid())), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nothing deleted"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("[y/N]"), std::string::npos) << "refused before asking: " << r.out;
  }
  {
    HistoryDb h(db, HistoryDb::Mode::Read);
    ASSERT_TRUE(h.run(id).has_value());
    EXPECT_EQ(h.run(id)->status, store::RunStatus::Running);
  }
  {
    HistoryDb h(db, HistoryDb::Mode::Write);
    h.finish_run(id, store::RunStatus::Finished, "");
  }
  CliResult done = run_halo("runs delete " + std::to_string(id) + " --yes --db " + db);
  EXPECT_EQ(done.code, 0) << done.out;
  HistoryDb h(db, HistoryDb::Mode::Read);
  EXPECT_FALSE(h.run(id).has_value());
}

TEST(Runs, SigkilledLauncherLeavesAReadableHistoryAndAnInterruptedRun) {
  const std::string dir = fresh_dir("runs-kill");
  const std::string db = dir + "/h.db";
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 100000}}}});
  std::thread killer([&] {
    for (int i = 0; i < 600; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!fs::exists(db)) continue;
      std::optional<pid_t> launcher;
      try {
        HistoryDb h(db, HistoryDb::Mode::Read);  // a reader while the run writes
        auto runs = h.list_runs();
        if (!runs.empty() && h.metric_rows(runs[0].id) >= 20 && runs[0].launcher_pid)
          launcher = static_cast<pid_t>(*runs[0].launcher_pid);
      } catch (const util::Error&) {
        continue;  // the launcher is still creating the file: "no run history" yet
      }
      if (!launcher) continue;
      ::kill(*launcher, SIGKILL);
      return;
    }
  });
  CliResult r = run_halo("launch --no-progress " + exp + " --db " + db);
  killer.join();
  EXPECT_NE(r.code, 0);
  for (const auto& hello : read_events(dir + "/run", "hello", -1)) ::kill(hello["pid"].get<int>(), SIGKILL);

  CliResult l = run_halo("runs list --json --db " + db);
  ASSERT_EQ(l.code, 0) << l.out;
  const auto runs = json_of(l);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "INTERRUPTED");
  HistoryDb h(db, HistoryDb::Mode::Read);
  const auto loss = h.metrics(runs[0]["id"].get<int64_t>(), std::string("loss"));
  ASSERT_FALSE(loss.empty());
  EXPECT_EQ(runs[0]["last_step"].get<int64_t>(), loss.back().step);
  EXPECT_GE(runs[0]["steps"].get<int64_t>(), 2);
  store::SqliteDb ro(db, true, false);
  store::Statement ok = ro.prepare("PRAGMA integrity_check");
  ASSERT_TRUE(ok.step());
  EXPECT_EQ(ok.get_text(0), "ok");
}

TEST(Runs, CorruptAndForeignDatabasesAreRefusedAndLeftUntouched) {
  const std::string dir = fresh_dir("runs-foreign");
  const std::string corrupt = dir + "/corrupt.db", foreign = dir + "/foreign.db";
  std::ofstream(corrupt, std::ios::binary) << "not sqlite at all" << std::string(3000, '\x01');
  sqlite3* f = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &f), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(f, "CREATE TABLE notes(t TEXT); INSERT INTO notes VALUES('mine');", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(f);
  const std::string corrupt_bytes = bytes_of(corrupt), foreign_bytes = bytes_of(foreign);
  const std::string exp = write_experiment(dir, {});
  for (const auto& [path, words] :
       {std::pair{corrupt, "not a SQLite database"}, std::pair{foreign, "not a Halo run history"}}) {
    CliResult a = run_halo("launch --no-progress " + exp + " --db " + path);
    EXPECT_NE(a.code, 0);
    EXPECT_NE(a.out.find(path), std::string::npos) << a.out;
    EXPECT_NE(a.out.find(words), std::string::npos) << a.out;
    CliResult l = run_halo("runs list --json --db " + path);
    EXPECT_NE(l.code, 0);
    EXPECT_NE(l.out.find(words), std::string::npos) << l.out;
  }
  EXPECT_EQ(bytes_of(corrupt), corrupt_bytes);
  EXPECT_EQ(bytes_of(foreign), foreign_bytes);
  EXPECT_FALSE(fs::exists(dir + "/run"));  // refused before the run folder was made
}

TEST(Runs, EveryVerbHasHelpAndBenchStoreReports) {
  for (const char* verb : {"list", "show", "compare", "metrics", "tag", "note", "delete"}) {
    CliResult r = run_halo(std::string("runs ") + verb + " --help");
    EXPECT_EQ(r.code, 0) << verb << r.out;
    EXPECT_NE(r.out.find("--db"), std::string::npos) << verb << r.out;
  }
  CliResult b = run_halo("bench store --rows 3000 --json");
  ASSERT_EQ(b.code, 0) << b.out;
  const auto j = json_of(b);
  EXPECT_GE(j["metric_rows"].get<int64_t>(), 3000);
  EXPECT_GT(j["rows_per_s"].get<double>(), 0);
}

}  // namespace
}  // namespace halo::testing
