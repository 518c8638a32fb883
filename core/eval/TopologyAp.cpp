// Per-vertex topology AP over the matched relation matrix (evaluate.py _AP_directerd /
// _AP_undirecterd, which are the same computation: every row, then every column).
#include "eval/TopologyAp.h"

#include <limits>

#include "eval/AveragePrecision.h"
#include "eval/Matrix.h"
#include "eval/NumpyArithmetic.h"

namespace halo::eval {
namespace {

constexpr double kRelationThreshold = 0.5;  // THRESHOLD_RELATIONSHIP_CONFIDENCE
// (1 - gt) * (0.5 + eps) for unmatched pairs, computed in float32 by numpy.
const double kUnmatchedNegative = 0.5f + std::numeric_limits<float>::epsilon();

// AP of one vertex: its true neighbours among `n` candidates and its scores above 0.5.
template <class Truth, class Score>
float vertex_ap(int64_t n, Truth truth, Score score) {
  std::vector<int64_t> gt, pred;
  std::vector<double> confidence;
  for (int64_t k = 0; k < n; ++k) {
    if (truth(k)) gt.push_back(k);
    if (score(k) > kRelationThreshold) {
      pred.push_back(k);
      confidence.push_back(score(k));
    }
  }
  return vertex_average_precision(gt, pred, confidence);
}

}  // namespace

void append_vertex_aps(const std::vector<std::vector<int>>& gt, int64_t rows, int64_t cols,
                       const std::vector<std::vector<double>>& pred, const std::vector<int64_t>& row_match,
                       const std::vector<int64_t>& col_match, std::vector<float>& aps) {
  Matrix p(rows, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t pi = row_match[static_cast<size_t>(i)], pj = col_match[static_cast<size_t>(j)];
      p(i, j) = (pi >= 0 && pj >= 0) ? pred[static_cast<size_t>(pi)][static_cast<size_t>(pj)]
                                     : (gt[static_cast<size_t>(i)][static_cast<size_t>(j)] ? 0.0 : kUnmatchedNegative);
    }
  auto truth = [&](int64_t i, int64_t j) { return gt[static_cast<size_t>(i)][static_cast<size_t>(j)] != 0; };
  for (int64_t i = 0; i < rows; ++i)
    aps.push_back(vertex_ap(
        cols, [&](int64_t k) { return truth(i, k); }, [&](int64_t k) { return p(i, k); }));
  for (int64_t j = 0; j < cols; ++j)
    aps.push_back(vertex_ap(
        rows, [&](int64_t k) { return truth(k, j); }, [&](int64_t k) { return p(k, j); }));
}

float mean_vertex_ap(const std::vector<float>& aps) { return aps.empty() ? 0.0f : numpy_mean(aps); }

std::vector<int64_t> invert_matches(const std::vector<int64_t>& pred_to_gt, int64_t num_gts) {
  std::vector<int64_t> gt_to_pred(static_cast<size_t>(num_gts), -1);
  for (size_t p = 0; p < pred_to_gt.size(); ++p)
    if (pred_to_gt[p] >= 0) gt_to_pred[static_cast<size_t>(pred_to_gt[p])] = static_cast<int64_t>(p);
  return gt_to_pred;
}

}  // namespace halo::eval
