// The time each labelled halo exchange took to post and wait for (forward gather, backward
// scatter), summed per label since the last reset: what the worker reports as `exchange`.
#pragma once

#include <map>
#include <string>

namespace halo::parallel {

class ExchangeClock {
 public:
  static void add(const std::string& label, double seconds);  // thread-safe; empty labels are not kept
  static std::map<std::string, double> seconds();             // per label, since the last reset
  static void reset();
};

}  // namespace halo::parallel
