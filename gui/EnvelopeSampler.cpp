// Column binning by binary search to the visible range, then one pass; TensorBoard's
// debiased EMA (the same formula as its scalar dashboard).
#include "EnvelopeSampler.h"

#include <algorithm>
#include <cmath>

namespace halo::gui {

std::vector<EnvelopeColumn> EnvelopeSampler::sample(const double* x, const double* y, size_t n, double x_min,
                                                    double x_max, int columns) {
  std::vector<EnvelopeColumn> out;
  if (n == 0 || columns <= 0 || !(x_max >= x_min)) return out;
  const double* first = std::lower_bound(x, x + n, x_min);
  const double* last = std::upper_bound(first, x + n, x_max);
  const double width = (x_max - x_min) / columns;
  out.reserve(static_cast<size_t>(std::min<ptrdiff_t>(columns, last - first)));
  int current = -1;
  for (const double* p = first; p != last; ++p) {
    const double v = y[p - x];
    if (!std::isfinite(v)) continue;
    int col = width > 0 ? static_cast<int>((*p - x_min) / width) : 0;
    col = std::clamp(col, 0, columns - 1);
    if (col != current) {
      out.push_back({x_min + (col + 0.5) * width, v, v, v});
      current = col;
    } else {
      auto& c = out.back();
      c.lo = std::min(c.lo, v);
      c.hi = std::max(c.hi, v);
      c.last = v;
    }
  }
  return out;
}

std::vector<double> EnvelopeSampler::smooth(const std::vector<double>& y, double weight) {
  std::vector<double> out(y.size());
  double acc = 0;
  int64_t count = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) {
      out[i] = y[i];
      continue;
    }
    acc = acc * weight + (1 - weight) * y[i];
    ++count;
    const double debias = weight > 0 ? 1 - std::pow(weight, static_cast<double>(count)) : 1;
    out[i] = acc / debias;
  }
  return out;
}

}  // namespace halo::gui
