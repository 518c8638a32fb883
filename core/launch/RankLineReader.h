// Reads the ranks' stdout pipes: waits for output (poll), splits it into lines, keeps a partial
// line until its newline arrives, and hands the unterminated rest of a stream over at its end.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace halo::launch {

class RankLineReader {
 public:
  // rank: the index of the stream in `fds`; line: without its newline.
  using LineHandler = std::function<void(int rank, const std::string& line)>;

  // fds[k]: rank k's stdout pipe (read end; the reader neither owns nor closes it).
  explicit RankLineReader(std::vector<int> fds);
  // Waits up to `timeout` for output (sleeps that long when every stream has ended), reads
  // what is there and calls on_line for each complete line, in order per rank.
  void poll(std::chrono::milliseconds timeout, const LineHandler& on_line);
  // Reads rank's stream to its end (its process has exited), for at most `timeout`.
  void drain(int rank, std::chrono::milliseconds timeout, const LineHandler& on_line);
  bool open(int rank) const { return open_.at(static_cast<size_t>(rank)); }
  int open_count() const;

 private:
  void read(size_t k, const LineHandler& on_line);  // one read(2) of stream k
  std::vector<int> fds_;
  std::vector<std::string> partial_;
  std::vector<bool> open_;
};

}  // namespace halo::launch
