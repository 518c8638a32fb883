// ATen's parallel_for is OpenMP code inlined into its caller: this file alone is compiled with
// -fopenmp, and the process's libgomp is LibTorch's own, so the threads are ATen's and MKL's.
#include "parallel/ThreadSplit.h"

#include <ATen/Parallel.h>

#include <algorithm>

namespace halo::parallel {

void split_over_threads(int64_t units, int64_t work_per_unit, const std::function<void(int64_t, int64_t)>& fn) {
  if (units <= 0) {
    fn(0, units);  // nothing to split; the caller still sees its one (empty) part
    return;
  }
  const int64_t per_unit = std::max<int64_t>(work_per_unit, 1);
  const int64_t grain = (kMinSplitWork + per_unit - 1) / per_unit;  // units of kMinSplitWork elements
  at::parallel_for(0, units, grain, fn);
}

}  // namespace halo::parallel
