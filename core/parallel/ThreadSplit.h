// Splits a hand-written CPU kernel's work over the process's intra-op threads
// (parallel.threads_per_rank), as ATen's parallel_for does for its own kernels.
#pragma once

#include <cstdint>
#include <functional>

namespace halo::parallel {

// Runs fn(begin, end) over [0, units) in contiguous parts through at::parallel_for (OpenMP, on
// LibTorch's own threads: as many as at::get_num_threads(), i.e. parallel.threads_per_rank),
// with a grain of kMinSplitWork elements (work_per_unit each): part 0 on the caller; returns
// when all are done, rethrowing the first exception a part threw. Less work than that, one
// thread, or a call from inside a parallel region runs fn(0, units) inline. Parts must not
// write the same memory: a caller that splits over channels or columns gets the same bits for
// any thread count.
void split_over_threads(int64_t units, int64_t work_per_unit, const std::function<void(int64_t, int64_t)>& fn);

// Below this many elements of work a part would cost more to hand over than it saves.
inline constexpr int64_t kMinSplitWork = 32768;

}  // namespace halo::parallel
