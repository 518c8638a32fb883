// A really full disk (a small tmpfs the test mounts; needs root, as CI runs) under the run
// folder or the history: every write is checked, the run stops as FAILED naming the file and
// the cause, and says truthfully which checkpoint is intact.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "RunHelpers.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A tmpfs of `bytes` at a fresh folder, unmounted (lazily, if still busy) by the destructor.
class TinyDisk {
 public:
  explicit TinyDisk(size_t bytes) : path_(fresh_dir("tinydisk")) {
    if (::geteuid() != 0) {
      unsupported_ = "this test mounts a tmpfs and needs root (CI runs as root)";
      return;
    }
    const std::string opts = "size=" + std::to_string(bytes) + ",mode=0755";
    if (::mount("tmpfs", path_.c_str(), "tmpfs", 0, opts.c_str()) != 0)
      unsupported_ = "mount -t tmpfs -o " + opts + " " + path_ + ": " + std::strerror(errno);
  }
  ~TinyDisk() {
    if (unsupported_.empty()) ::umount2(path_.c_str(), MNT_DETACH);
  }
  const std::string& path() const { return path_; }
  const std::string& unsupported() const { return unsupported_; }

 private:
  std::string path_, unsupported_;
};

// Fills the disk with real data (tmpfs does not count holes) until about `leave` bytes are free.
void fill(const TinyDisk& d, size_t leave) {
  struct statvfs s {};
  ASSERT_EQ(::statvfs(d.path().c_str(), &s), 0);
  const size_t free_bytes = s.f_bavail * s.f_frsize;
  ASSERT_GT(free_bytes, leave);
  std::ofstream out(d.path() + "/filler", std::ios::binary | std::ios::app);
  const std::string block(4096, 'f');
  for (size_t n = 0; n + leave < free_bytes; n += block.size()) out.write(block.data(), block.size());
}

nlohmann::json only_run(const std::string& db) {
  CliResult l = run_halo("runs list --json --db " + db);
  EXPECT_EQ(l.code, 0) << l.out;
  auto runs = nlohmann::json::parse(l.out, nullptr, false);
  EXPECT_TRUE(runs.is_array() && runs.size() == 1) << l.out;
  return runs.is_array() && !runs.empty() ? runs[0] : nlohmann::json::object();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `halo launch EXPERIMENT` of a long run until it stops by itself: its exit code and output.
CliResult launch_until_it_stops(const std::string& dir, const std::string& db, const std::string& experiment) {
  const pid_t launcher = spawn_logged({HALO_CLI, "launch", "--no-progress", "--db", db, experiment}, dir + "/out.txt");
  const int code = wait_exit(launcher, 300s);
  return {code, file_text(dir + "/out.txt")};
}

TEST(FullDisk, EventsFillingTheRunFolderStopTheRunNamingTheFile) {
  TinyDisk disk(256 << 10);
  if (!disk.unsupported().empty()) GTEST_SKIP() << disk.unsupported();
  const std::string dir = fresh_dir("full-events"), db = dir + "/history.db", run = disk.path() + "/run";
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 100000}}}, {"run_dir", run}});
  const auto [code, out] = launch_until_it_stops(dir, db, exp);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(contains(out, "cannot write " + run + "/events.jsonl: No space left on device")) << out;
  EXPECT_TRUE(contains(out, "no checkpoint was saved: the run cannot be resumed")) << out;
  const auto r = only_run(db);
  EXPECT_EQ(r.value("status", ""), "FAILED") << r.dump();
  EXPECT_TRUE(contains(r.value("exit_reason", ""), run + "/events.jsonl: No space left on device")) << r.dump();
  // Every line in the log is whole: the failed one was cut back off.
  std::ifstream in(run + "/events.jsonl");
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines)
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line.substr(0, 200);
  EXPECT_GT(lines, 10);
  for (const auto& h : read_events(run, "hello", -1))
    EXPECT_NE(::kill(h["pid"].get<pid_t>(), 0), 0) << "rank still alive: " << h.dump();
}

TEST(FullDisk, ACheckpointOnAFullDiskNamesTheFileAndTheIntactOne) {
  TinyDisk disk(8 << 20);
  if (!disk.unsupported().empty()) GTEST_SKIP() << disk.unsupported();
  const std::string dir = fresh_dir("full-ckpt"), db = dir + "/history.db", run = disk.path() + "/run";
  const std::string exp =
      write_experiment(dir, {{"schedule", {{"steps", 6}}}, {"train", {{"checkpoint_every", 3}}}, {"run_dir", run}});
  const CliResult first = run_halo("launch --no-progress --db " + db + " " + exp);
  ASSERT_EQ(first.code, 0) << first.out;
  const std::string step3 = run + "/checkpoints/step-000003.pt", step6 = run + "/checkpoints/step-000006.pt";
  const std::string step3_bytes = file_text(step3);
  ASSERT_GT(step3_bytes.size(), 10000u);
  fs::remove(step6);
  fill(disk, step3_bytes.size() / 2);  // room for events, not for a checkpoint
  const CliResult r = run_halo("launch --no-progress --db " + db + " --resume " + run);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "checkpoint " + step6 + " was not saved")) << r.out;
  EXPECT_TRUE(contains(r.out, "No space left on device")) << r.out;
  EXPECT_TRUE(contains(r.out, "the latest intact checkpoint is " + step3 + " (step 3)")) << r.out;
  EXPECT_EQ(file_text(step3), step3_bytes);
  EXPECT_FALSE(fs::exists(step6));
  for (const auto& e : fs::directory_iterator(run + "/checkpoints"))
    EXPECT_EQ(e.path().filename(), "step-000003.pt") << "left behind: " << e.path();
}

TEST(FullDisk, NoCheckpointAtAllIsSaidSo) {
  TinyDisk disk(8 << 20);
  if (!disk.unsupported().empty()) GTEST_SKIP() << disk.unsupported();
  const std::string dir = fresh_dir("full-none"), db = dir + "/history.db", run = disk.path() + "/run";
  fill(disk, 64 << 10);
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 2}}}, {"run_dir", run}});
  const CliResult r = run_halo("launch --no-progress --db " + db + " " + exp);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "checkpoint " + run + "/checkpoints/step-000002.pt was not saved")) << r.out;
  EXPECT_TRUE(contains(r.out, "no checkpoint was saved: the run cannot be resumed")) << r.out;
  EXPECT_FALSE(contains(r.out, "is intact")) << r.out;
  EXPECT_EQ(only_run(db).value("status", ""), "FAILED");
}

TEST(FullDisk, AFullHistoryDiskStopsTheRunWithItsReason) {
  TinyDisk disk(160 << 10);
  if (!disk.unsupported().empty()) GTEST_SKIP() << disk.unsupported();
  const std::string dir = fresh_dir("full-history"), db = disk.path() + "/history.db";
  const std::string exp = write_experiment(dir, {{"schedule", {{"steps", 100000}}}});
  const auto [code, out] = launch_until_it_stops(dir, db, exp);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(contains(out, "the run history " + db + " could not be written: ")) << out;
  EXPECT_TRUE(contains(out, "disk is full")) << out;
  for (const auto& h : read_events(dir + "/run", "hello", -1))
    EXPECT_NE(::kill(h["pid"].get<pid_t>(), 0), 0) << "rank still alive: " << h.dump();
}

}  // namespace
}  // namespace halo::testing
