// One process-wide table under a mutex: autograd may run a backward on another thread.
#include "parallel/ExchangeClock.h"

#include <mutex>

namespace halo::parallel {

namespace {

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, double>& table() {
  static std::map<std::string, double> t;
  return t;
}

}  // namespace

void ExchangeClock::add(const std::string& label, double seconds) {
  if (label.empty()) return;
  const std::lock_guard lock(table_mutex());
  table()[label] += seconds;
}

std::map<std::string, double> ExchangeClock::seconds() {
  const std::lock_guard lock(table_mutex());
  return table();
}

void ExchangeClock::reset() {
  const std::lock_guard lock(table_mutex());
  table().clear();
}

}  // namespace halo::parallel
