// The grace is measured from the first stop(); SIGKILL is sent once, since it cannot be
// caught and reaped ranks are skipped by signal_all.
#include "launch/RankStopper.h"

#include <csignal>

namespace halo::launch {

RankStopper::RankStopper(std::function<void(int)> signal_all, std::chrono::milliseconds grace)
    : signal_all_(std::move(signal_all)), grace_(grace) {}

void RankStopper::stop(clock::time_point now) {
  if (kill_at_) return;
  kill_at_ = now + grace_;
  signal_all_(SIGTERM);
}

void RankStopper::tick(clock::time_point now) {
  if (!kill_at_ || killed_ || now <= *kill_at_) return;
  killed_ = true;
  signal_all_(SIGKILL);
}

}  // namespace halo::launch
