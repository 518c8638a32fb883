// Minimum-cost assignment on a rectangular cost matrix (scipy.optimize.linear_sum_assignment
// semantics): used by Hungarian matching in the OpenLane-V2 losses and by the metric.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace halo::util {

// cost is rows x cols, row-major. Returns (row, col) pairs, min(rows, cols) of them, sorted
// by row, minimising the summed cost. Throws util::Error on a non-finite cost or bad size.
std::vector<std::pair<int64_t, int64_t>> linear_sum_assignment(const std::vector<double>& cost, int64_t rows,
                                                               int64_t cols);

}  // namespace halo::util
