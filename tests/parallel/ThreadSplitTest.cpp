// split_over_threads: the parts cover every unit once, run on two threads when the process has
// two and the work is large enough, inline otherwise, and an exception in any part reaches the caller.
#include "parallel/ThreadSplit.h"

#include "support/IntraOpThreads.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace halo::parallel {
namespace {

using Threads = testing::IntraOpThreads;

struct Part {
  int64_t begin, end;
  std::thread::id thread;
};

std::vector<Part> run_parts(int64_t units, int64_t work_per_unit) {
  std::mutex m;
  std::vector<Part> parts;
  split_over_threads(units, work_per_unit, [&](int64_t b, int64_t e) {
    std::lock_guard lock(m);
    parts.push_back({b, e, std::this_thread::get_id()});
  });
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.begin < b.begin; });
  return parts;
}

TEST(ThreadSplit, TwoThreadsRunTwoPartsThatCoverEveryUnitOnce) {
  Threads two(2);
  const auto parts = run_parts(5, kMinSplitWork);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].begin, 0);
  EXPECT_GE(parts[0].end - parts[0].begin, 2);  // nearly equal runs: 3 and 2
  EXPECT_GE(parts[1].end - parts[1].begin, 2);
  EXPECT_EQ(parts[0].end, parts[1].begin);
  EXPECT_EQ(parts[1].end, 5);
  EXPECT_EQ(parts[0].thread, std::this_thread::get_id());  // part 0 runs on the caller
  EXPECT_NE(parts[1].thread, std::this_thread::get_id());
}

TEST(ThreadSplit, OneThreadOrLittleWorkRunsInlineInOnePart) {
  {
    Threads one(1);
    const auto parts = run_parts(5, kMinSplitWork);
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_EQ(std::make_pair(parts[0].begin, parts[0].end), std::make_pair(int64_t{0}, int64_t{5}));
    EXPECT_EQ(parts[0].thread, std::this_thread::get_id());
  }
  Threads two(2);
  const auto small = run_parts(5, kMinSplitWork / 5 - 1);  // less than kMinSplitWork in all
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].thread, std::this_thread::get_id());
  const auto one_unit = run_parts(1, 10 * kMinSplitWork);
  ASSERT_EQ(one_unit.size(), 1u);
  EXPECT_EQ(run_parts(0, kMinSplitWork).size(), 1u);  // fn(0, 0), inline
}

TEST(ThreadSplit, AnExceptionInAnotherThreadsPartReachesTheCallerAfterEveryPart) {
  Threads two(2);
  std::mutex m;
  int finished = 0;
  EXPECT_THROW(split_over_threads(4, kMinSplitWork,
                                  [&](int64_t b, int64_t) {
                                    if (b > 0) throw std::runtime_error("part failed");
                                    std::lock_guard lock(m);
                                    ++finished;
                                  }),
               std::runtime_error);
  EXPECT_EQ(finished, 1);  // part 0 ran to its end before the rethrow
}

}  // namespace
}  // namespace halo::parallel
