// poll(2) over the streams still open; each ready one gets one read(2) of up to 64 KiB per
// call. EOF (or a read error) ends a stream; EINTR and EAGAIN only mean "try again".
#include "launch/RankLineReader.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace halo::launch {

RankLineReader::RankLineReader(std::vector<int> fds)
    : fds_(std::move(fds)), partial_(fds_.size()), open_(fds_.size(), true) {}

int RankLineReader::open_count() const {
  int n = 0;
  for (bool o : open_) n += o ? 1 : 0;
  return n;
}

void RankLineReader::poll(std::chrono::milliseconds timeout, const LineHandler& on_line) {
  std::vector<pollfd> fds;
  std::vector<size_t> who;
  for (size_t k = 0; k < fds_.size(); ++k)
    if (open_[k]) {
      fds.push_back({fds_[k], POLLIN, 0});
      who.push_back(k);
    }
  if (fds.empty()) {
    std::this_thread::sleep_for(timeout);
    return;
  }
  if (::poll(fds.data(), fds.size(), static_cast<int>(timeout.count())) <= 0) return;
  for (size_t i = 0; i < fds.size(); ++i)
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read(who[i], on_line);
}

void RankLineReader::drain(int rank, std::chrono::milliseconds timeout, const LineHandler& on_line) {
  const size_t k = static_cast<size_t>(rank);
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (open_.at(k)) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd fd{fds_[k], POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(left.count())) > 0) read(k, on_line);
  }
}

void RankLineReader::read(size_t k, const LineHandler& on_line) {
  char buf[65536];
  const ssize_t n = ::read(fds_[k], buf, sizeof buf);
  std::string& acc = partial_[k];
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    open_[k] = false;
    if (!acc.empty()) on_line(static_cast<int>(k), acc), acc.clear();
    return;
  }
  acc.append(buf, static_cast<size_t>(n));
  size_t from = 0;
  for (size_t nl; (nl = acc.find('\n', from)) != std::string::npos; from = nl + 1)
    on_line(static_cast<int>(k), acc.substr(from, nl - from));
  acc.erase(0, from);
}

}  // namespace halo::launch
