// Sets the process's intra-op threads (at::set_num_threads) for one scope of a test and puts
// the previous count back when it ends, also when an assertion returns early.
#pragma once

#include <ATen/Parallel.h>

namespace halo::testing {

class IntraOpThreads {
 public:
  explicit IntraOpThreads(int n) : before_(at::get_num_threads()) { at::set_num_threads(n); }
  ~IntraOpThreads() { at::set_num_threads(before_); }
  IntraOpThreads(const IntraOpThreads&) = delete;
  IntraOpThreads& operator=(const IntraOpThreads&) = delete;

 private:
  int before_;
};

}  // namespace halo::testing
