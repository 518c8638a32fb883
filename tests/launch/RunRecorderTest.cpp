// The launcher's record of a run: each line tagged into events.jsonl and the history, the
// failure text from the first error event or exit, and the history row closed with it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <cstring>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "launch/RunRecorder.h"
#include "protocol/EventLine.h"

namespace halo::launch {
namespace {

namespace fs = std::filesystem;

fs::path fresh(const std::string& tag) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("halo-recorder-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(RunRecorder, TagsEveryLineIntoEventsJsonlAndTakesTheFirstError) {
  const fs::path dir = fresh("lines");
  RunRecorder rec(dir, nullptr, 0);
  const double before = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  rec.record(1, R"({"event":"done","rank":-1,"steps":5})");
  rec.record(0, "plain text from a library");
  rec.record(1, R"({"event":"error","hint":"free some space","message":"disk full","rank":1})");
  rec.record(0, R"({"event":"error","hint":"","message":"second","rank":0})");
  const auto lines = lines_of(dir / "events.jsonl");
  ASSERT_EQ(lines.size(), 4u);
  const protocol::EventLine done = protocol::parse_line(lines[0]);
  EXPECT_EQ(done.rank, 1);
  ASSERT_TRUE(done.time.has_value());
  EXPECT_GE(*done.time, before);
  EXPECT_EQ(std::get<protocol::DoneEvent>(done.event), (protocol::DoneEvent{1, 5}));  // the launcher's rank
  EXPECT_EQ(std::get<protocol::LogEvent>(protocol::parse_line(lines[1]).event).text, "plain text from a library");
  EXPECT_EQ(rec.failure(), "rank 1: disk full\n  hint: free some space");
  rec.rank_failed(1, 1, false, "/r/rank1.log", "    last line\n");
  EXPECT_EQ(rec.failure(), "rank 1: disk full\n  hint: free some space\n  rank 1 log (/r/rank1.log):\n    last line\n");
  rec.interrupted("stopped by SIGTERM");
  EXPECT_EQ(rec.failure(), "stopped by SIGTERM");
}

TEST(RunRecorder, AnExitWithoutAnErrorEventIsTheFailure) {
  const fs::path dir = fresh("exit");
  RunRecorder rec(dir, nullptr, 0);
  EXPECT_TRUE(rec.failure().empty());
  rec.rank_failed(3, 137, false, "/r/rank3.log", "");
  EXPECT_EQ(rec.failure(), "rank 3 exited with code 137\n  rank 3 log (/r/rank3.log):\n");
}

// A rank that loses its peer reports it before the launcher sees the peer die: the dead rank
// is the cause, the lost-peer error follows it (without its hint, which blames an unnamed peer).
TEST(RunRecorder, TheRankThatDiedIsTheCauseNotThePeerThatLostIt) {
  const fs::path dir = fresh("peer");
  RunRecorder rec(dir, nullptr, 0);
  rec.record(
      0,
      R"({"event":"error","hint":"a peer rank died","message":"halo exchange failed: reset","peer_lost":true,"rank":0})");
  EXPECT_FALSE(rec.cause_known());
  EXPECT_EQ(rec.failure(), "rank 0: halo exchange failed: reset\n  hint: a peer rank died");  // alone, it stands
  rec.rank_failed(0, 1, false, "/r/rank0.log", "");
  EXPECT_FALSE(rec.cause_known());  // the rank that lost its peer is not the cause
  rec.rank_failed(1, 128 + SIGKILL, true, "/r/rank1.log", "");
  EXPECT_TRUE(rec.cause_known());
  EXPECT_EQ(rec.failure(), fmt::format("rank 1 was killed by signal 9 ({})\n  then rank 0: halo exchange failed: reset"
                                       "\n  rank 0 log (/r/rank0.log):\n\n  rank 1 log (/r/rank1.log):\n",
                                       ::strsignal(SIGKILL)));
}

TEST(RunRecorder, AnErrorOfARanksOwnOutranksAnEarlierLostPeer) {
  const fs::path dir = fresh("own");
  RunRecorder rec(dir, nullptr, 0);
  rec.record(1, R"({"event":"error","hint":"","message":"all-reduce failed","peer_lost":true,"rank":1})");
  rec.record(0, R"({"event":"error","hint":"lower optim.lr","message":"loss is NaN","rank":0})");
  EXPECT_TRUE(rec.cause_known());
  EXPECT_EQ(rec.failure(), "rank 0: loss is NaN\n  hint: lower optim.lr\n  then rank 1: all-reduce failed");
}

TEST(RunRecorder, RecordsIntoTheHistoryAndClosesTheRun) {
  const fs::path dir = fresh("history");
  store::HistoryDb db((dir / "history.db").string(), store::HistoryDb::Mode::Write);
  const int64_t id = db.begin_run({{"name", "rec"}}, dir.string());
  {
    RunRecorder rec(dir, &db, id);
    rec.record(0, R"({"event":"step","losses":{"loss":null},"rank":0,"step":0})");  // a diverged loss
    rec.record(0, R"({"event":"step","losses":{"loss":0.5},"rank":0,"step":1})");
    rec.record(1, R"({"event":"error","message":"boom","rank":1})");
    rec.finish(false);
  }
  const auto run = db.run(id);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->status, store::RunStatus::Failed);
  EXPECT_EQ(run->exit_reason, "rank 1: boom");
  EXPECT_EQ(run->steps(), 2);
  const auto loss = db.metrics(id, "loss");
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_FALSE(loss[0].value.has_value());
  EXPECT_DOUBLE_EQ(*loss[1].value, 0.5);
  EXPECT_EQ(db.events(id).size(), 1u);
}

}  // namespace
}  // namespace halo::launch
