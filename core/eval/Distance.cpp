// Port of the devkit's pairwise distances with numpy's dtypes kept: float32 ground truth,
// float64 predictions, scipy's cdist in float64 and numpy's pairwise means.
#include "eval/Distance.h"

#include <algorithm>
#include <cmath>

#include "eval/NumpyArithmetic.h"

namespace halo::eval {
namespace {

constexpr double kMaskedDistance = 1024.0;  // pairwise()'s fill value
constexpr double kChamferMask = 3.0;        // THRESHOLDS_FRECHET[-1]

// Squared distance summed as scipy's cdist sums it; sqrt is monotonic and correctly rounded,
// so min/max over squared distances then sqrt gives exactly min/max over distances.
double squared(const data::Vec3& a, const data::Vec3& b) {
  const double d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
  return d0 * d0 + d1 * d1 + d2 * d2;
}
double euclidean(const data::Vec3& a, const data::Vec3& b) { return std::sqrt(squared(a, b)); }

// Gap between the axis-aligned boxes of two curves: no point pair is closer than this.
double box_gap(const Curve& a, const Curve& b) {
  double gap2 = 0;
  for (int k = 0; k < 3; ++k) {
    auto [amin, amax] =
        std::minmax_element(a.begin(), a.end(), [k](const auto& p, const auto& q) { return p[k] < q[k]; });
    auto [bmin, bmax] =
        std::minmax_element(b.begin(), b.end(), [k](const auto& p, const auto& q) { return p[k] < q[k]; });
    const double d = std::max({0.0, (*bmin)[k] - (*amax)[k], (*amin)[k] - (*bmax)[k]});
    gap2 += d * d;
  }
  return std::sqrt(gap2);
}

float to_f32(double v) { return static_cast<float>(v); }

Curve float32_curve(const std::vector<data::Vec3>& points) {
  Curve c(points.size());
  for (size_t i = 0; i < points.size(); ++i)
    for (int k = 0; k < 3; ++k) c[i][k] = to_f32(points[i][k]);
  return c;
}

// A numpy scalar in iou_distance: Python int 0 (weak), np.float32 (gt) or np.float64 (pred).
struct Scalar {
  enum Kind { Int, F32, F64 } kind;
  double v;
};

Scalar::Kind result_kind(const Scalar& a, const Scalar& b) {
  if (a.kind == Scalar::Int) return b.kind;
  if (b.kind == Scalar::Int) return a.kind;
  return (a.kind == Scalar::F32 && b.kind == Scalar::F32) ? Scalar::F32 : Scalar::F64;
}

template <class Op>
Scalar apply(const Scalar& a, const Scalar& b, Op op) {
  const Scalar::Kind k = result_kind(a, b);
  if (k == Scalar::F32) return {k, op(to_f32(a.v), to_f32(b.v))};
  return {k, op(a.v, b.v)};
}

Scalar sub(const Scalar& a, const Scalar& b) {
  return apply(a, b, [](auto x, auto y) { return x - y; });
}
Scalar mul(const Scalar& a, const Scalar& b) {
  return apply(a, b, [](auto x, auto y) { return x * y; });
}
Scalar add(const Scalar& a, const Scalar& b) {
  return apply(a, b, [](auto x, auto y) { return x + y; });
}
// Python's max(a, b) / min(a, b): the first argument unless the second is strictly better.
Scalar py_max(const Scalar& a, const Scalar& b) { return b.v > a.v ? b : a; }
Scalar py_min(const Scalar& a, const Scalar& b) { return b.v < a.v ? b : a; }

}  // namespace

double frechet_distance(const Curve& gt, const Curve& pred) {
  // ca[i][j] over pred points i and gt points j, kept one row at a time.
  const size_t n = pred.size(), m = gt.size();
  std::vector<double> prev(m), cur(m);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < m; ++j) {
      const double c = squared(pred[i], gt[j]);
      if (i == 0 && j == 0)
        cur[j] = c;
      else if (i == 0)
        cur[j] = std::max(cur[j - 1], c);
      else if (j == 0)
        cur[j] = std::max(prev[0], c);
      else
        cur[j] = std::max(std::min({prev[j], cur[j - 1], prev[j - 1]}), c);
    }
    std::swap(prev, cur);
  }
  return std::sqrt(prev[m - 1]);
}

double chamfer_distance(const Curve& gt_in, const Curve& pred) {
  size_t g = gt_in.size();
  if (gt_in.front() == gt_in.back()) --g;
  std::vector<double> to_gt(pred.size(), INFINITY), to_pred(g, INFINITY);
  for (size_t i = 0; i < pred.size(); ++i)
    for (size_t j = 0; j < g; ++j) {
      const double d = squared(pred[i], gt_in[j]);
      to_gt[i] = std::min(to_gt[i], d);
      to_pred[j] = std::min(to_pred[j], d);
    }
  for (double& d : to_gt) d = std::sqrt(d);
  for (double& d : to_pred) d = std::sqrt(d);
  return (numpy_mean(to_gt) + numpy_mean(to_pred)) / 2;
}

double relaxation_factor(const Curve& gt) {
  // scipy's euclidean on a float32 point: BLAS snrm2, rounded to float32, returned as float.
  double ego = INFINITY;
  for (const auto& p : gt) ego = std::min(ego, static_cast<double>(to_f32(euclidean(p, {0, 0, 0}))));
  return std::max(0.5, 1 - 5e-3 * ego);
}

double iou_distance(const std::array<double, 4>& gt_box, const std::array<double, 4>& pred_box) {
  const Scalar zero{Scalar::Int, 0.0};
  Scalar g[4], p[4];
  for (int k = 0; k < 4; ++k) {
    g[k] = {Scalar::F32, to_f32(gt_box[k])};
    p[k] = {Scalar::F64, pred_box[k]};
  }
  const Scalar bxmin = py_max(p[0], g[0]), bymin = py_max(p[1], g[1]);
  const Scalar bxmax = py_min(p[2], g[2]), bymax = py_min(p[3], g[3]);
  const Scalar inter = mul(py_max(sub(bxmax, bxmin), zero), py_max(sub(bymax, bymin), zero));
  const Scalar uni = sub(add(mul(sub(p[2], p[0]), sub(p[3], p[1])), mul(sub(g[2], g[0]), sub(g[3], g[1]))), inter);
  return 1 - inter.v / uni.v;
}

Matrix lane_distances(const std::vector<data::LaneCenterline>& gt, const std::vector<LanePrediction>& pred) {
  Matrix out(static_cast<int64_t>(gt.size()), static_cast<int64_t>(pred.size()), kMaskedDistance);
  for (size_t i = 0; i < gt.size(); ++i) {
    const Curve g = float32_curve(gt[i].points);
    const double relax = relaxation_factor(g);
    for (size_t j = 0; j < pred.size(); ++j) {
      // Chamfer >= the gap between the curves' boxes: beyond 3 m / relax the mask is certainly off.
      if (box_gap(g, pred[j].points) * relax > kChamferMask + 1e-6) continue;
      if (!(chamfer_distance(g, pred[j].points) * relax < kChamferMask)) continue;
      out(static_cast<int64_t>(i), static_cast<int64_t>(j)) = frechet_distance(g, pred[j].points) * relax;
    }
  }
  return out;
}

Matrix element_distances(const std::vector<data::TrafficElement>& gt, const std::vector<ElementPrediction>& pred) {
  Matrix out(static_cast<int64_t>(gt.size()), static_cast<int64_t>(pred.size()), kMaskedDistance);
  for (size_t i = 0; i < gt.size(); ++i)
    for (size_t j = 0; j < pred.size(); ++j)
      out(static_cast<int64_t>(i), static_cast<int64_t>(j)) = iou_distance(gt[i].box, pred[j].box);
  return out;
}

}  // namespace halo::eval
