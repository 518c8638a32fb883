// The parts run as one OpenMP parallel region: this file alone is compiled with -fopenmp, and
// the process's libgomp is LibTorch's own, so the threads are the ones MKL and ATen already use.
#include "parallel/ThreadSplit.h"

#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <exception>
#include <vector>

namespace halo::parallel {

int64_t split_begin(int64_t units, int64_t parts, int64_t p) { return units / parts * p + std::min(p, units % parts); }

void split_over_threads(int64_t units, int64_t work_per_unit, const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t by_work = units * std::max<int64_t>(work_per_unit, 1) / kMinSplitWork;
  const int64_t parts = std::min({int64_t{at::get_num_threads()}, units, by_work});
  if (parts <= 1 || omp_in_parallel()) {
    fn(0, units);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
#pragma omp parallel num_threads(static_cast <int>(parts))
  {
    const int64_t n = omp_get_num_threads(), p = omp_get_thread_num();  // n <= parts
    try {
      fn(split_begin(units, n, p), split_begin(units, n, p + 1));
    } catch (...) {
      errors[static_cast<size_t>(p)] = std::current_exception();
    }
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace halo::parallel
