// Arc-length resampling by linear interpolation along the cumulative segment lengths.
#include "data/Polyline.h"

#include <algorithm>
#include <cmath>

namespace halo::data {

double polyline_length(const std::vector<Vec3>& p) {
  double len = 0;
  for (size_t i = 1; i < p.size(); ++i)
    len += std::hypot(p[i][0] - p[i - 1][0], p[i][1] - p[i - 1][1], p[i][2] - p[i - 1][2]);
  return len;
}

std::vector<Vec3> resample_polyline(const std::vector<Vec3>& p, int n) {
  if (p.empty() || n < 2) return {};
  std::vector<double> cum(p.size(), 0.0);
  for (size_t i = 1; i < p.size(); ++i)
    cum[i] = cum[i - 1] + std::hypot(p[i][0] - p[i - 1][0], p[i][1] - p[i - 1][1], p[i][2] - p[i - 1][2]);
  std::vector<Vec3> out(static_cast<size_t>(n), p.front());
  if (cum.back() <= 0) return out;
  size_t seg = 0;
  for (int k = 1; k + 1 < n; ++k) {
    const double t = cum.back() * k / (n - 1);
    while (seg + 2 < p.size() && cum[seg + 1] < t) ++seg;
    const double len = cum[seg + 1] - cum[seg];
    const double a = len > 0 ? std::clamp((t - cum[seg]) / len, 0.0, 1.0) : 0.0;
    for (int c = 0; c < 3; ++c) out[k][c] = p[seg][c] + a * (p[seg + 1][c] - p[seg][c]);
  }
  out.back() = p.back();
  return out;
}

}  // namespace halo::data
