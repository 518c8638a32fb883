// Faults of a real multi-process run: the launcher killed, a rank hung in a collective, a
// full disk while checkpointing, a taken rendezvous port, a second launcher on a run folder.
// (A killed rank and Ctrl-C are in LaunchCommandTest.)
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "RunHelpers.h"
#include "support/Sockets.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// `halo args...` in a child process, output to `log`, with extra environment (which the
// launcher passes on to its ranks).
pid_t start_halo(const std::vector<std::string>& args, const std::string& log,
                 const std::map<std::string, std::string>& env = {}) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out) ::dup2(::fileno(out), 2);
    std::vector<char*> argv{const_cast<char*>(HALO_CLI)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(HALO_CLI, argv.data());
    ::_exit(127);
  }
  return pid;
}

// Exit code (128+signal when killed), or -1 when it did not end within `limit`.
int wait_for(pid_t pid, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(50ms);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Waits until rank `rank` of the run has logged a step; false after 60 s.
bool wait_for_step(const std::string& run_dir, int rank) {
  for (int i = 0; i < 600; ++i) {
    if (!read_events(run_dir, "step", rank).empty()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

// A process that no longer runs (gone, or a zombie nobody has reaped yet).
bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_s, comm, state;
  stat >> pid_s >> comm >> state;
  return state == "Z";
}

TEST(Fault, KilledLauncherLeavesNoRankAndNoPort) {
  const std::string dir = fresh_dir("killlauncher");
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 100000}}}});
  auto [fd, port] = occupy_port();
  ::close(fd);  // a port known to be free, given to the launcher
  const pid_t launcher = start_halo({"launch", "--no-progress", "--port", std::to_string(port), exp}, dir + "/out.txt");
  ASSERT_TRUE(wait_for_step(dir + "/run", 1)) << slurp(dir + "/out.txt");
  EXPECT_TRUE(listening_on(port));
  const auto hello = read_events(dir + "/run", "hello", -1);
  ASSERT_EQ(hello.size(), 2u);
  ::kill(launcher, SIGKILL);
  ::waitpid(launcher, nullptr, 0);
  const auto killed = std::chrono::steady_clock::now();
  for (const auto& h : hello) {
    const pid_t rank = h["pid"].get<pid_t>();
    while (!gone(rank) && std::chrono::steady_clock::now() - killed < 10s) std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(gone(rank)) << "rank still running 10 s after its launcher was killed: " << h.dump();
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_LT(took, 5.0) << "ranks took " << took << " s to exit";
  EXPECT_FALSE(listening_on(port)) << "port " << port << " still has a listener";
}

TEST(Fault, HungRankEndsTheRunWithTheCollectiveAndRankNamed) {
  const std::string dir = fresh_dir("hang");
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 100}}}});
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t launcher =
      start_halo({"launch", "--no-progress", exp}, dir + "/out.txt",
                 {{"HALO_COLLECTIVE_TIMEOUT", "3"}, {"HALO_TEST_STALL_AT_STEP", "2"}, {"HALO_TEST_STALL_RANK", "1"}});
  const int code = wait_for(launcher, 120s);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string out = slurp(dir + "/out.txt");
  EXPECT_EQ(code, 1) << out;
  EXPECT_LT(took, 60.0) << out;
  // Rank 0 waited 3 s in the first collective of step 2 (a forward halo exchange with rank 1).
  EXPECT_NE(out.find("rank 0: halo exchange on group 'sp0' (rank 0 of 2) failed"), std::string::npos) << out;
  EXPECT_NE(out.find("HALO_COLLECTIVE_TIMEOUT"), std::string::npos) << out;
  EXPECT_EQ(read_events(dir + "/run", "step", 0).size(), 2u);
  const auto errors = read_events(dir + "/run", "error", 0);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0]["message"].get<std::string>().find("halo exchange"), std::string::npos);
}

// The size of a file, or -1.
int64_t size_of(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? -1 : static_cast<int64_t>(n);
}

TEST(Fault, FullDiskWhileCheckpointingKeepsThePreviousCheckpoint) {
  const std::string dir = fresh_dir("diskfull"), run = dir + "/run", db = dir + "/history.db";
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 6}}}, {"train", {{"checkpoint_every", 3}}}});
  CliResult first = run_halo("launch --no-progress --db " + db + " " + exp);
  ASSERT_EQ(first.code, 0) << first.out;
  const auto full = losses(run);
  ASSERT_EQ(full.size(), 6u);
  const std::string step3 = run + "/checkpoints/step-000003.pt", step6 = run + "/checkpoints/step-000006.pt";
  const std::string step3_bytes = slurp(step3);
  ASSERT_GT(step3_bytes.size(), 10000u);
  fs::remove(step6);
  fs::rename(run + "/events.jsonl", run + "/events.first.jsonl");
  // Resume with the ranks' files limited to half a checkpoint (RLIMIT_FSIZE): writing step 6
  // fails with EFBIG, as on a full disk.
  const pid_t launcher = start_halo({"launch", "--no-progress", "--db", db, "--resume", run}, dir + "/out.txt",
                                    {{"HALO_TEST_FSIZE_LIMIT", std::to_string(step3_bytes.size() / 2)}});
  const int code = wait_for(launcher, 120s);
  const std::string out = slurp(dir + "/out.txt");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("checkpoint " + step6 + " was not saved"), std::string::npos) << out;
  EXPECT_NE(out.find("File too large"), std::string::npos) << out;
  EXPECT_EQ(size_of(step6), -1);
  EXPECT_EQ(slurp(step3), step3_bytes);
  for (const auto& e : fs::directory_iterator(run + "/checkpoints"))
    EXPECT_EQ(e.path().filename(), "step-000003.pt") << "left behind: " << e.path();
  // The previous checkpoint still resumes, to the same losses as the uninterrupted run.
  fs::rename(run + "/events.jsonl", run + "/events.failed.jsonl");
  CliResult again = run_halo("launch --no-progress --db " + db + " --resume " + run);
  ASSERT_EQ(again.code, 0) << again.out;
  const auto tail = losses(run);
  ASSERT_EQ(tail.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(tail[i], full[3 + i], 1e-6 * std::abs(full[3 + i])) << "step " << 3 + i;
  }
}

TEST(Fault, TakenRendezvousPortIsReplacedByAFreeOne) {
  const std::string dir = fresh_dir("porttaken");
  auto [fd, port] = occupy_port();
  CliResult r = run_halo("launch --no-progress " + write_experiment(dir, {{"schedule", {{"steps", 2}}}}) + " --port " +
                         std::to_string(port));
  ::close(fd);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("rendezvous port " + std::to_string(port) + " is taken"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("using port"), std::string::npos) << r.out;
  // The same through torchrun's variable.
  const std::string dir2 = fresh_dir("porttaken-env");
  auto [fd2, port2] = occupy_port();
  const std::string exp2 = write_experiment(dir2, {{"schedule", {{"steps", 2}}}});
  CliResult env =
      run_command("MASTER_PORT=" + std::to_string(port2) + " " + HALO_CLI + " launch --no-progress " + exp2);
  ::close(fd2);
  EXPECT_EQ(env.code, 0) << env.out;
  EXPECT_NE(env.out.find("rendezvous port " + std::to_string(port2) + " is taken"), std::string::npos) << env.out;
}

TEST(Fault, SecondLauncherOnTheSameRunFolderIsRefused) {
  const std::string dir = fresh_dir("twolaunchers");
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 100000}}}});
  const pid_t first = start_halo({"launch", "--no-progress", exp}, dir + "/out.txt");
  ASSERT_TRUE(wait_for_step(dir + "/run", 0)) << slurp(dir + "/out.txt");
  CliResult second = run_halo("launch --no-progress " + exp);
  EXPECT_NE(second.code, 0);
  EXPECT_NE(second.out.find("another launcher is using run folder " + dir + "/run"), std::string::npos) << second.out;
  // The first run was not disturbed: it is still training.
  const size_t before = read_events(dir + "/run", "step", 0).size();
  std::this_thread::sleep_for(1s);
  EXPECT_GT(read_events(dir + "/run", "step", 0).size(), before);
  EXPECT_EQ(read_events(dir + "/run", "hello", -1).size(), 2u);
  ::kill(first, SIGINT);
  EXPECT_EQ(wait_for(first, 30s), 130);
}

}  // namespace
}  // namespace halo::testing
