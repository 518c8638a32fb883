// The launcher's writer: step events become metric rows (steps x keys) and per-rank samples,
// NaN is kept as a flag, a reader sees a live run grow, dead launchers' runs get INTERRUPTED.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "StoreTestSupport.h"
#include "store/HistoryDb.h"
#include "store/Sha256.h"
#include "store/StoreBench.h"

namespace halo::store {
namespace {

namespace fs = std::filesystem;

std::string temp_db(const std::string& tag) { return store::temp_db("storew", tag); }

nlohmann::json step_event(int64_t step, int rank, double loss) {
  return {{"event", "step"},
          {"rank", rank},
          {"step", step},
          {"losses", {{"loss", loss}, {"aux", 2 * loss}}},
          {"lr", 0.1},
          {"grad_norm", 1.5},
          {"loss_scale", 1.0},
          {"time_ms", {{"forward", 1.0}, {"backward", 2.0}, {"comm", 0.5}, {"optim", 0.25}, {"total", 4.0 + rank}}},
          {"memory", {{"current", 100}, {"peak", 1000 * (rank + 1)}, {"reserved", 2000}, {"rss", 3000}}}};
}
constexpr int kKeys = 2 + 3 + 5;  // losses + lr/grad_norm/loss_scale + time_ms.*

TEST(StoreWriter, StepEventsBecomeMetricsSamplesAndArtifacts) {
  const std::string path = temp_db("steps");
  HistoryDb db(path, HistoryDb::Mode::Write);
  const int64_t id = db.begin_run({{"name", "exp"}, {"parallel", {{"strategy", "tp"}, {"sp", 2}, {"dp", 1}}}}, "/r");
  db.record_event(id, 0, {{"event", "hello"}, {"device", "cpu"}, {"host", "h"}});
  db.record_event(id, 0, {{"event", "layout"}, {"layers", nlohmann::json::array()}});
  for (int s = 0; s < 7; ++s)
    for (int r = 0; r < 2; ++r) db.record_event(id, r, step_event(s, r, 1.0 / (s + 1)));
  const std::string ckpt = fs::path(path).parent_path() / "step-7.pt";
  std::ofstream(ckpt) << "checkpoint bytes";
  db.record_event(id, 0, {{"event", "checkpoint"}, {"step", 7}, {"path", ckpt}, {"bytes", 16}});
  db.record_event(id, 1, {{"event", "error"}, {"message", "boom"}});
  db.finish_run(id, RunStatus::Finished, "");

  EXPECT_EQ(db.metric_rows(id), 7 * kKeys);
  auto r = db.run(id);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, RunStatus::Finished);
  EXPECT_EQ(r->steps(), 7);
  EXPECT_EQ(r->strategy, "tp");
  EXPECT_EQ(r->sp, 2);
  EXPECT_NE(r->devices.find("cpu"), std::string::npos);
  EXPECT_EQ(db.metrics(id, "loss").size(), 7u);
  auto peaks = db.rank_peaks(id);
  ASSERT_EQ(peaks.size(), 2u);
  EXPECT_EQ(peaks[1].peak, 2000);
  EXPECT_DOUBLE_EQ(*db.mean_step_ms(id), 4.0);
  auto art = db.artifacts(id);
  ASSERT_EQ(art.size(), 1u);
  EXPECT_EQ(art[0].sha256, Sha256::of("checkpoint bytes"));
  EXPECT_EQ(*art[0].bytes, 16);
  EXPECT_TRUE(db.layout(id).has_value());
  auto ev = db.events(id);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].kind, "error");
  auto sum = db.metric_summaries(id);
  auto loss = std::find_if(sum.begin(), sum.end(), [](const MetricSummary& m) { return m.key == "loss"; });
  ASSERT_NE(loss, sum.end());
  EXPECT_DOUBLE_EQ(*loss->best, 1.0 / 7);
  EXPECT_EQ(*loss->best_step, 6);
}

TEST(StoreWriter, SummaryHasTheLastLossBestScorePeakAndStepTime) {
  HistoryDb db(temp_db("summary"), HistoryDb::Mode::Write);
  const int64_t id = db.begin_run({{"name", "exp"}}, "/r");
  const int64_t empty = db.begin_run({{"name", "none"}}, "/e");
  const double losses[] = {1, 0.5, 0.25, 0.3, 0.4};
  for (int s = 0; s < 5; ++s)
    for (int r = 0; r < 2; ++r) db.record_event(id, r, step_event(s, r, losses[s]));
  for (double ols : {0.25, 0.5, 0.375}) db.record_event(id, 0, {{"event", "eval"}, {"step", 4}, {"OLS", ols}});
  db.flush();
  const RunSummary s = db.summary(id);
  ASSERT_TRUE(s.final_loss && s.best_score && s.peak_bytes && s.mean_step_ms);
  EXPECT_DOUBLE_EQ(*s.final_loss, 0.4);    // the last step's, not the smallest
  EXPECT_DOUBLE_EQ(*s.best_score, 0.5);    // the largest score
  EXPECT_EQ(*s.peak_bytes, 2000);          // rank 1's
  EXPECT_DOUBLE_EQ(*s.mean_step_ms, 4.0);  // rank 0's total_ms
  const RunSummary none = db.summary(empty);
  EXPECT_FALSE(none.final_loss || none.best_score || none.peak_bytes || none.mean_step_ms);
}

TEST(StoreWriter, NanIsStoredAsNullWithAFlag) {
  const std::string path = temp_db("nan");
  HistoryDb db(path, HistoryDb::Mode::Write);
  const int64_t id = db.begin_run({{"name", "nan"}}, "");
  db.record_event(id, 0, step_event(0, 0, std::nan("")));  // nlohmann writes NaN as null in JSON lines too
  db.record_event(id, 0, nlohmann::json::parse(step_event(1, 0, std::nan("")).dump()));
  db.flush();
  auto loss = db.metrics(id, "loss");
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_FALSE(loss[0].value.has_value());
  EXPECT_FALSE(loss[1].value.has_value());
  SqliteDb ro(path, true, false);
  EXPECT_EQ(ro.scalar_int("SELECT COUNT(*) FROM metrics WHERE key='loss' AND is_nan=1 AND value IS NULL"), 2);
}

TEST(StoreWriter, ReaderSeesALiveRunGrow) {
  const std::string path = temp_db("live");
  HistoryDb db(path, HistoryDb::Mode::Write);
  const int64_t id = db.begin_run({{"name", "live"}}, "");
  HistoryDb reader(path, HistoryDb::Mode::Read);
  int64_t seen_before = -1;
  for (int s = 0; s < 20; ++s) {
    db.record_event(id, 0, step_event(s, 0, 1.0));
    if (s == 9) {
      std::this_thread::sleep_for(db.batch_interval + std::chrono::milliseconds(20));
      db.tick();  // the launcher's poll loop calls this
      seen_before = reader.metric_rows(id);
      EXPECT_EQ(reader.run(id)->status, RunStatus::Running);
      EXPECT_EQ(reader.run(id)->steps(), 10);
    }
  }
  EXPECT_EQ(seen_before, 10 * kKeys);
  db.finish_run(id, RunStatus::Finished, "");
  EXPECT_EQ(reader.metric_rows(id), 20 * kKeys);
  EXPECT_EQ(reader.run(id)->status, RunStatus::Finished);
}

TEST(StoreWriter, RunOfADeadLauncherIsInterruptedWithItsLastStep) {
  const std::string path = temp_db("dead");
  { HistoryDb init(path, HistoryDb::Mode::Write); }
  const pid_t child = ::fork();
  if (child == 0) {
    HistoryDb db(path, HistoryDb::Mode::Write);
    const int64_t id = db.begin_run({{"name", "doomed"}}, "");
    for (int s = 0; s < 13; ++s) db.record_event(id, 0, step_event(s, 0, 1.0));
    db.flush();
    ::_exit(0);  // no finish_run, as if SIGKILLed
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  HistoryDb reader(path, HistoryDb::Mode::Read);
  auto runs = reader.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::Interrupted);
  EXPECT_EQ(runs[0].steps(), 13);
  EXPECT_NE(runs[0].exit_reason.find("launcher"), std::string::npos);
}

TEST(StoreWriter, TagsNotesFiltersAndDelete) {
  const std::string path = temp_db("tags");
  HistoryDb db(path, HistoryDb::Mode::Write);
  const int64_t a = db.begin_run({{"name", "a"}}, ""), b = db.begin_run({{"name", "b"}}, "");
  db.record_event(a, 0, step_event(0, 0, 1.0));
  db.finish_run(a, RunStatus::Finished, "");
  db.finish_run(b, RunStatus::Failed, "rank 1 exited");
  db.add_tag(a, "baseline");
  db.add_note(a, "first try");
  EXPECT_EQ(db.list_runs(RunStatus::Failed).size(), 1u);
  ASSERT_EQ(db.list_runs(std::nullopt, "baseline").size(), 1u);
  EXPECT_EQ(db.list_runs(std::nullopt, "baseline")[0].name, "a");
  EXPECT_EQ(db.notes(a).at(0).text, "first try");
  EXPECT_TRUE(db.delete_run(a));
  EXPECT_FALSE(db.delete_run(a));
  EXPECT_EQ(db.metric_rows(a), 0);  // cascaded
  EXPECT_TRUE(db.tags(a).empty());
  EXPECT_EQ(db.list_runs().size(), 1u);
}

TEST(StoreBench, SmallBenchWritesEveryRowAndTheReaderKeepsUp) {
  StoreBenchOptions o;
  o.metric_rows = 6000;
  const StoreBenchReport r = run_store_bench(o);
  EXPECT_GE(r.metric_rows, 6000);
  EXPECT_EQ(r.sample_rows, r.steps * 8);
  EXPECT_GT(r.reader_polls, 0);
  EXPECT_GT(r.rows_per_s, 0);
}

}  // namespace
}  // namespace halo::store
