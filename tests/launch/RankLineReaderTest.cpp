// The ranks' stdout reader on real pipes: lines split across reads are joined, several ranks
// keep their own order, and the unterminated rest of a stream is a line at its end.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "launch/RankLineReader.h"

namespace halo::launch {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(fd), 0); }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void write(const std::string& s) { ASSERT_EQ(::write(fd[1], s.data(), s.size()), static_cast<ssize_t>(s.size())); }
  void close_writer() { ::close(fd[1]), fd[1] = -1; }
};

using Lines = std::vector<std::pair<int, std::string>>;

// Polls until every stream has ended (at most ~5 s).
Lines read_all(RankLineReader& reader) {
  Lines got;
  for (int i = 0; i < 50 && reader.open_count() > 0; ++i)
    reader.poll(std::chrono::milliseconds(100), [&](int r, const std::string& l) { got.emplace_back(r, l); });
  return got;
}

TEST(RankLineReader, JoinsLinesSplitAcrossWritesAndKeepsTheRestAtTheEnd) {
  Pipe p;
  RankLineReader reader({p.fd[0]});
  Lines got;
  auto keep = [&](int r, const std::string& l) { got.emplace_back(r, l); };
  p.write("{\"event\":\"he");
  reader.poll(std::chrono::milliseconds(100), keep);
  EXPECT_TRUE(got.empty());  // no newline yet: nothing handed over
  p.write("llo\"}\nsecond\n\nthird without newline");
  p.close_writer();
  for (const auto& l : read_all(reader)) got.push_back(l);
  const Lines want{{0, "{\"event\":\"hello\"}"}, {0, "second"}, {0, ""}, {0, "third without newline"}};
  EXPECT_EQ(got, want);
  EXPECT_FALSE(reader.open(0));
  EXPECT_EQ(reader.open_count(), 0);
}

TEST(RankLineReader, EachRankKeepsItsOwnOrderAndEndsOnItsOwn) {
  Pipe a, b;
  RankLineReader reader({a.fd[0], b.fd[0]});
  a.write("a1\na2\n");
  b.write("b1\n");
  b.close_writer();
  Lines got;
  for (int i = 0; i < 50 && reader.open(1); ++i)
    reader.poll(std::chrono::milliseconds(100), [&](int r, const std::string& l) { got.emplace_back(r, l); });
  EXPECT_TRUE(reader.open(0));  // rank 0's writer is still open
  EXPECT_EQ(reader.open_count(), 1);
  a.write("a3");
  a.close_writer();
  for (const auto& l : read_all(reader)) got.push_back(l);
  Lines rank0, rank1;
  for (const auto& l : got) (l.first == 0 ? rank0 : rank1).push_back(l);
  EXPECT_EQ(rank0, (Lines{{0, "a1"}, {0, "a2"}, {0, "a3"}}));
  EXPECT_EQ(rank1, (Lines{{1, "b1"}}));
}

TEST(RankLineReader, DrainReadsOneRankToItsEnd) {
  Pipe a, b;
  RankLineReader reader({a.fd[0], b.fd[0]});
  b.write("last words\npartial");
  b.close_writer();
  a.write("not yet\n");
  Lines got;
  reader.drain(1, std::chrono::seconds(5), [&](int r, const std::string& l) { got.emplace_back(r, l); });
  EXPECT_EQ(got, (Lines{{1, "last words"}, {1, "partial"}}));  // rank 0's line waits for the next poll
  EXPECT_FALSE(reader.open(1));
  EXPECT_TRUE(reader.open(0));
  const auto t0 = std::chrono::steady_clock::now();
  reader.drain(0, std::chrono::milliseconds(200), [&](int r, const std::string& l) { got.emplace_back(r, l); });
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));  // its writer is still open
  EXPECT_EQ(got.back(), (std::pair<int, std::string>{0, "not yet"}));
}

TEST(RankLineReader, WithEveryStreamEndedPollWaitsItsTimeout) {
  Pipe p;
  p.close_writer();
  RankLineReader reader({p.fd[0]});
  read_all(reader);
  ASSERT_EQ(reader.open_count(), 0);
  const auto t0 = std::chrono::steady_clock::now();
  int calls = 0;
  reader.poll(std::chrono::milliseconds(50), [&](int, const std::string&) { ++calls; });
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(50));
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace halo::launch
