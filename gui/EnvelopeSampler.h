// Min/max-per-pixel-column decimation of a long series, so a plot of 100 k steps x 8 ranks
// draws a few thousand points; pure (no Qt), tested without a display.
#pragma once

#include <cstddef>
#include <vector>

namespace halo::gui {

// One pixel column: its x (the column's centre in data units) and the smallest, largest
// and last y of the points that fall in it. Empty columns are left out.
struct EnvelopeColumn {
  double x = 0, lo = 0, hi = 0, last = 0;
};

class EnvelopeSampler {
 public:
  // Points (x[i], y[i]) with x ascending; the visible range [x_min, x_max] split into
  // `columns` equal columns. Non-finite y values are skipped. O(log n + points in range).
  static std::vector<EnvelopeColumn> sample(const double* x, const double* y, size_t n, double x_min, double x_max,
                                            int columns);
  static std::vector<EnvelopeColumn> sample(const std::vector<double>& x, const std::vector<double>& y, double x_min,
                                            double x_max, int columns) {
    return sample(x.data(), y.data(), x.size() < y.size() ? x.size() : y.size(), x_min, x_max, columns);
  }
  // TensorBoard's smoothing: exponential moving average with debiasing (weight in [0, 1)).
  static std::vector<double> smooth(const std::vector<double>& y, double weight);
};

}  // namespace halo::gui
