// `halo launch` end to end on CPU ranks: strategies give the same losses as one process,
// resume equals an uninterrupted run (from the highest step), loss falls, a killed rank stops
// the run, and bad experiments and folders that hold a run are refused.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "RunHelpers.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;

std::vector<double> run_losses(const nlohmann::json& patch, const std::string& tag) {
  const std::string dir = fresh_dir(tag);
  CliResult r = run_halo("launch --no-progress " + write_experiment(dir, patch));
  EXPECT_EQ(r.code, 0) << r.out;
  return losses(dir + "/run");
}

void expect_same(const std::vector<double>& a, const std::vector<double>& b, double rel) {
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], rel * std::abs(b[i])) << "step " << i;
  }
}

TEST(Launch, ShardedAndCheckpointedRunsEqualOneProcess) {
  const auto single = run_losses({{"parallel", {{"strategy", "none"}, {"sp", 1}}}}, "single");
  const auto tp2 = run_losses({{"parallel", {{"strategy", "tp"}, {"sp", 2}}}}, "tp2");
  const auto ckpt = run_losses({{"parallel", {{"strategy", "checkpoint"}, {"sp", 1}}}}, "ckpt");
  const auto both =
      run_losses({{"parallel", {{"strategy", "tp+checkpoint"}, {"sp", 2}, {"checkpoint_level", "stage"}}}}, "tpckpt");
  ASSERT_EQ(single.size(), 5u);
  expect_same(tp2, single, 1e-5);
  expect_same(ckpt, single, 1e-5);
  expect_same(both, single, 1e-5);
}

TEST(Launch, HybridDpSpRunsAndDropPathReplaysUnderCheckpointing) {
  // dp=2 x sp=2 with stochastic depth: checkpointed recompute must replay the same masks.
  const nlohmann::json base = {{"model", {{"drop_path", 0.3}}}, {"train", {{"accumulation", 2}}}};
  nlohmann::json a = base, b = base;
  a["parallel"] = {{"strategy", "tp"}, {"sp", 2}, {"dp", 2}};
  b["parallel"] = {{"strategy", "tp+checkpoint"}, {"sp", 2}, {"dp", 2}};
  expect_same(run_losses(b, "hyb-ckpt"), run_losses(a, "hyb"), 1e-5);
}

TEST(Launch, ResumeEqualsUninterrupted) {
  const nlohmann::json patch = {{"schedule", {{"steps", 6}}}, {"train", {{"checkpoint_every", 3}}}};
  const auto full = run_losses(patch, "full");
  // A run of 3 steps (same schedule length) then resumed from its checkpoint.
  const std::string dir = fresh_dir("resume");
  const std::string exp = write_experiment(dir, patch);
  CliResult first = run_halo("launch --no-progress " + exp + " --set schedule.steps=6 --set train.checkpoint_every=3");
  ASSERT_EQ(first.code, 0) << first.out;
  // Throw away everything after step 3, as if the run had died there.
  fs::remove(dir + "/run/checkpoints/step-000006.pt");
  fs::rename(dir + "/run/events.jsonl", dir + "/run/events.first.jsonl");
  CliResult resumed = run_halo("launch --no-progress --resume " + dir + "/run");
  ASSERT_EQ(resumed.code, 0) << resumed.out;
  const auto tail = losses(dir + "/run");
  ASSERT_EQ(tail.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(tail[i], full[3 + i], 1e-6 * std::abs(full[3 + i])) << "step " << 3 + i;
  }
}

TEST(Launch, ANewRunInAFolderHoldingARunIsRefusedAndChangesNothing) {
  const std::string dir = fresh_dir("held-folder");
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 2}}}});
  ASSERT_EQ(run_halo("launch --no-progress " + exp).code, 0);
  const auto before = files_under(dir + "/run");
  CliResult again = run_halo("launch --no-progress " + exp + " --set optim.lr=0.01");
  EXPECT_EQ(again.code, 2) << again.out;
  EXPECT_NE(again.out.find("run folder " + dir + "/run already holds a run (config.json, events.jsonl"),
            std::string::npos)
      << again.out;
  EXPECT_NE(again.out.find("halo launch --resume " + dir + "/run"), std::string::npos) << again.out;
  EXPECT_EQ(files_under(dir + "/run"), before);
}

TEST(Launch, LossFallsOnQuickstart) {
  const std::string dir = fresh_dir("quickstart");
  CliResult r = run_halo("launch --no-progress " + std::string(HALO_SOURCE_DIR) +
                         "/experiments/quickstart.json --set schedule.steps=40 --set run_dir=" + dir + "/run");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto l = losses(dir + "/run");
  ASSERT_EQ(l.size(), 40u);
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i)
    first += l[static_cast<size_t>(i)] / 5, last += l[l.size() - 1 - static_cast<size_t>(i)] / 5;
  EXPECT_LT(last, 0.5 * first) << "first-5 mean " << first << ", last-5 mean " << last;
}

TEST(Launch, KilledRankStopsTheRunWithinTenSeconds) {
  const std::string dir = fresh_dir("kill");
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 100000}}}});
  std::chrono::steady_clock::time_point killed_at{};
  std::thread killer([&] {
    for (int i = 0; i < 600; ++i) {
      auto steps = read_events(dir + "/run", "step", 1);
      auto hello = read_events(dir + "/run", "hello", 1);
      if (!steps.empty() && !hello.empty()) {
        ::kill(hello[0]["pid"].get<int>(), SIGKILL);
        killed_at = std::chrono::steady_clock::now();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  CliResult r = run_halo("launch --no-progress " + exp);
  const auto ended = std::chrono::steady_clock::now();
  killer.join();
  EXPECT_NE(r.code, 0);
  // The killed rank is the cause, even when its peer reports the lost connection first.
  EXPECT_NE(r.out.find("failed: rank 1 was killed by signal 9"), std::string::npos) << r.out;
  // Every other rank is stopped and the launcher returns within 10 s of the kill.
  ASSERT_NE(killed_at, std::chrono::steady_clock::time_point{});
  EXPECT_LT(std::chrono::duration<double>(ended - killed_at).count(), 10.0);
  auto last = read_events(dir + "/run", "step", 0);
  ASSERT_FALSE(last.empty());
  EXPECT_LT(last.back()["step"].get<int64_t>(), 100000 - 1);
}

// Ctrl-C, and SIGTERM (what timeout, scancel and docker stop send), stop every rank cleanly
// and close the run as KILLED saying which.
struct StopSignal {
  int signal;
  int exit_code;
  const char* reason;
};

class LaunchStop : public ::testing::TestWithParam<StopSignal> {};

TEST_P(LaunchStop, StopsEveryRankCleanlyAndRecordsTheRunAsKilled) {
  const StopSignal& p = GetParam();
  const std::string dir = fresh_dir("stop"), db = dir + "/h.db";
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 100000}}}});
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(HALO_CLI, HALO_CLI, "launch", "--no-progress", "--db", db.c_str(), exp.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 600 && read_events(dir + "/run", "step", 0).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_FALSE(read_events(dir + "/run", "step", 0).empty());
  auto hello = read_events(dir + "/run", "hello", -1);
  ::kill(pid, p.signal);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the launcher died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), p.exit_code);
  for (const auto& h : hello) {
    EXPECT_NE(::kill(h["pid"].get<int>(), 0), 0) << "rank still alive: " << h.dump();
  }
  CliResult show = run_halo("runs show 1 --json --db " + db);
  ASSERT_EQ(show.code, 0) << show.out;
  const auto run = nlohmann::json::parse(show.out);
  EXPECT_EQ(run["status"], "KILLED");
  EXPECT_EQ(run["exit_reason"], p.reason);
}

INSTANTIATE_TEST_SUITE_P(Signals, LaunchStop,
                         ::testing::Values(StopSignal{SIGINT, 130, "stopped by the user (Ctrl-C)"},
                                           StopSignal{SIGTERM, 143, "stopped by SIGTERM"}),
                         [](const auto& info) { return info.param.signal == SIGINT ? "CtrlC" : "Sigterm"; });

// A rank stopped with SIGSTOP (or frozen) writes no heartbeat: the launcher names it, not the
// ranks that wait for it, within 30 s (HALO_SILENCE_S, default 20), and the run is FAILED.
TEST(Launch, AStoppedRankIsNamedByItsSilenceWithinThirtySeconds) {
  const std::string dir = fresh_dir("sigstop"), db = dir + "/h.db", out = dir + "/out.txt";
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 100000}}}});
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(out.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ::dup2(fd, 1), ::dup2(fd, 2);
    ::execl(HALO_CLI, HALO_CLI, "launch", "--no-progress", "--db", db.c_str(), exp.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 600 && read_events(dir + "/run", "step", 1).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto hello = read_events(dir + "/run", "hello", 1);
  ASSERT_EQ(hello.size(), 1u);
  const pid_t rank1 = hello[0]["pid"].get<pid_t>();
  ::kill(rank1, SIGSTOP);
  const auto stopped = std::chrono::steady_clock::now();
  int status = 0;
  ::waitpid(pid, &status, 0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  ::kill(rank1, SIGKILL);  // in case the launcher did not
  const std::string text = file_text(out);
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 1) << text;
  EXPECT_LT(took, 30.0) << text;
  EXPECT_NE(text.find("rank 1 is silent: no heartbeat for 20 s; its process (pid " + std::to_string(rank1) +
                      ") is stopped (SIGSTOP or a debugger)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("rank 0: "), std::string::npos) << "the waiting rank is blamed:\n" << text;
  CliResult show = run_halo("runs show 1 --json --db " + db);
  ASSERT_EQ(show.code, 0) << show.out;
  const auto run = nlohmann::json::parse(show.out);
  EXPECT_EQ(run["status"], "FAILED");
  EXPECT_NE(run["exit_reason"].get<std::string>().find("rank 1 is silent"), std::string::npos) << run.dump();
  EXPECT_TRUE(read_events(dir + "/run", "heartbeat", -1).empty()) << "heartbeats are kept out of events.jsonl";
}

TEST(Launch, MoreThreadsThanCoresIsAWarningWithTheSettingThatFits) {
  const std::string dir = fresh_dir("threads");
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  ASSERT_GT(cores, 0);
  const std::string exp =
      write_experiment(dir, {{"schedule", {{"steps", 1}}}, {"parallel", {{"threads_per_rank", cores}}}});
  CliResult r = run_halo("launch --no-progress " + exp);  // 2 ranks x cores threads
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(fmt::format("2 rank(s) x parallel.threads_per_rank {} = {} threads on {} core(s)", cores,
                                   2 * cores, cores)),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(fmt::format("--set parallel.threads_per_rank={} fits", std::max(1, cores / 2))),
            std::string::npos)
      << r.out;
}

TEST(Launch, BadExperimentListsEveryProblem) {
  const std::string dir = fresh_dir("bad");
  const std::string exp = write_experiment(
      dir, {{"optim", {{"lr", -1}}}, {"model", {{"arch", "convnext_huge"}}}, {"data", {{"width", 100}}}});
  CliResult r = run_halo("launch --no-progress " + exp);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("optim.lr"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model.arch"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/run/events.jsonl"));
}

TEST(Launch, UnshardableWidthNamesNearestWidths) {
  const std::string dir = fresh_dir("width");
  CliResult r = run_halo("launch --no-progress " + write_experiment(dir, {{"data", {{"width", 96}}}}));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("64 and 128"), std::string::npos) << r.out;
}

TEST(Launch, WorkerEventsCarryLayoutMemoryAndTimings) {
  const std::string dir = fresh_dir("events");
  CliResult r = run_halo("launch --no-progress " + write_experiment(dir, {}));
  ASSERT_EQ(r.code, 0) << r.out;
  auto hello = read_events(dir + "/run", "hello", -1);
  EXPECT_EQ(hello.size(), 2u);
  auto layout = read_events(dir + "/run", "layout");
  ASSERT_EQ(layout.size(), 1u);
  const auto& stem = layout[0]["layers"][0];
  EXPECT_EQ(stem["name"], "stem.0");
  EXPECT_EQ(stem["ranks"].size(), 2u);
  EXPECT_EQ(stem["ranks"][1]["shape"][3].get<int64_t>(), 128 / 4 / 2);
  auto step = read_events(dir + "/run", "step", 1);
  ASSERT_EQ(step.size(), 5u);
  EXPECT_GT(step[0]["memory"]["peak"].get<int64_t>(), 0);
  EXPECT_GT(step[0]["memory"]["rss"].get<int64_t>(), 0);
  EXPECT_GT(step[0]["time_ms"]["forward"].get<double>(), 0.0);
  EXPECT_EQ(read_events(dir + "/run", "checkpoint").size(), 1u);
  EXPECT_EQ(read_events(dir + "/run", "done", -1).size(), 2u);
}

TEST(Launch, ProgressLineReportsEveryStepOfTheFirstRank) {
  const std::string dir = fresh_dir("progress");
  CliResult r = run_halo("launch " + write_experiment(dir, {}));  // stderr is no terminal: a line per step
  ASSERT_EQ(r.code, 0) << r.out;
  for (int s = 1; s <= 5; ++s)
    EXPECT_NE(r.out.find("step " + std::to_string(s) + "/5  loss "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" it/s  ETA 0:00:00  peak "), std::string::npos) << r.out;  // the last step: nothing left
  // The progress line's last loss is the one `halo launch` reports at the end.
  const auto steps = read_events(dir + "/run", "step", 0);
  ASSERT_EQ(steps.size(), 5u);
  const std::string loss = fmt::format("{:.4f}", steps.back()["losses"]["loss"].get<double>());
  EXPECT_NE(r.out.find("step 5/5  loss " + loss), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("finished: 5 steps, last loss " + loss), std::string::npos) << r.out;
  EXPECT_EQ(run_halo("launch --no-progress " + write_experiment(fresh_dir("quiet"), {})).out.find("step 1/5"),
            std::string::npos);
}

}  // namespace
}  // namespace halo::testing
