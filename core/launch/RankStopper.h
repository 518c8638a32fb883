// Stops a run's ranks the one way Halo does: SIGTERM to every rank, then SIGKILL to whatever
// still runs once the grace has passed. Used by the launcher's loop and RankSpawner::wait_all.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

namespace halo::launch {

class RankStopper {
 public:
  using clock = std::chrono::steady_clock;
  // signal_all(sig): sends sig to every rank still running (RankSpawner::kill_all).
  RankStopper(std::function<void(int)> signal_all, std::chrono::milliseconds grace);
  // SIGTERM now and the grace starts; later calls do nothing (the first reason stands).
  void stop(clock::time_point now = clock::now());
  // Call often while ranks run: SIGKILL once, when the grace is over.
  void tick(clock::time_point now = clock::now());
  bool stopping() const { return kill_at_.has_value(); }
  bool killed() const { return killed_; }

 private:
  std::function<void(int)> signal_all_;
  std::chrono::milliseconds grace_;
  std::optional<clock::time_point> kill_at_;
  bool killed_ = false;
};

}  // namespace halo::launch
