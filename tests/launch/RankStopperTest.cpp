// Stopping ranks: SIGTERM once at the first stop, SIGKILL once when the grace is over, and
// RankSpawner::wait_all stopping real processes the same way.
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "launch/RankSpawner.h"
#include "launch/RankStopper.h"

namespace halo::launch {
namespace {

using namespace std::chrono_literals;

TEST(RankStopper, TermAtOnceThenKillAfterTheGraceAndEachOnlyOnce) {
  std::vector<int> sent;
  RankStopper s([&](int sig) { sent.push_back(sig); }, 5000ms);
  const auto t0 = RankStopper::clock::now();
  s.tick(t0 + 60s);  // nothing to do before a stop
  EXPECT_TRUE(sent.empty());
  EXPECT_FALSE(s.stopping());
  s.stop(t0);
  EXPECT_TRUE(s.stopping());
  EXPECT_EQ(sent, std::vector<int>{SIGTERM});
  s.stop(t0 + 1s);  // a second reason changes nothing
  s.tick(t0 + 4900ms);
  EXPECT_EQ(sent, std::vector<int>{SIGTERM});
  EXPECT_FALSE(s.killed());
  s.tick(t0 + 5001ms);
  s.tick(t0 + 6s);
  EXPECT_EQ(sent, (std::vector<int>{SIGTERM, SIGKILL}));
  EXPECT_TRUE(s.killed());
}

TEST(RankStopper, WaitAllStopsTheOthersWhenOneFails) {
  // Rank 0 fails at once; rank 1 ignores SIGTERM, so only the SIGKILL after the grace ends it.
  // Rank 0 waits until rank 1 ignores SIGTERM (its file exists), so the grace is what ends rank 1.
  const std::string dir = ::testing::TempDir();
  const std::string ready = dir + "/halo-stopper-ready-" + std::to_string(::getpid());
  std::remove(ready.c_str());
  const std::string script = "if [ \"$RANK\" = 0 ]; then while [ ! -e '" + ready +
                             "' ]; do sleep 0.05; done; exit 3; fi; " + "trap '' TERM; touch '" + ready +
                             "'; exec sleep 60";
  RankSpawner ranks("/bin/sh", {"-c", script}, {}, dir);
  ranks.start(2, 1);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<RankExit> exits = ranks.wait_all(30s, 1s);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits[0].code, 3);
  EXPECT_TRUE(exits[1].signaled);
  EXPECT_EQ(exits[1].code, 128 + SIGKILL);
  EXPECT_GE(took, 0.9);
  EXPECT_LT(took, 10.0);
  std::remove(ready.c_str());
}

}  // namespace
}  // namespace halo::launch
