// A small dense row-major matrix of doubles: the pairwise distance matrices (ground truth x
// prediction) and the topology matrices the metric works on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace halo::eval {

struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> values;  // rows * cols, row-major

  Matrix() = default;
  Matrix(int64_t r, int64_t c, double fill = 0.0) : rows(r), cols(c), values(static_cast<size_t>(r * c), fill) {}
  double& operator()(int64_t i, int64_t j) { return values[static_cast<size_t>(i * cols + j)]; }
  double operator()(int64_t i, int64_t j) const { return values[static_cast<size_t>(i * cols + j)]; }
};

}  // namespace halo::eval
