// Port of the devkit's matching and AP functions: recalls and precisions in float32 (the
// 11 recall thresholds are float64, as np.arange makes them), descending-confidence order.
#include "eval/AveragePrecision.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

namespace halo::eval {
namespace {

constexpr float kEps = std::numeric_limits<float>::epsilon();  // np.finfo(np.float32).eps

// np.argsort(-confidence); numpy's sort is not stable, Halo keeps tied items in order.
std::vector<size_t> by_descending_confidence(const std::vector<double>& confidence) {
  std::vector<size_t> idx(confidence.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return -confidence[a] < -confidence[b]; });
  return idx;
}

// _pr_curve: mean over recall thresholds 0, 0.1, ..., 1 of the best precision at or above it.
float pr_curve(const std::vector<float>& recalls, const std::vector<float>& precisions) {
  float ap = 0.0f;
  for (int i = 0; i <= 10; ++i) {
    const double thr = i * 0.1;  // np.arange(0, 1 + 1e-3, 0.1)
    float best = 0.0f;
    bool any = false;
    for (size_t k = 0; k < recalls.size(); ++k)
      if (static_cast<double>(recalls[k]) >= thr) {
        best = any ? std::max(best, precisions[k]) : precisions[k];
        any = true;
      }
    ap += best;
  }
  return ap / 11.0f;
}

}  // namespace

FrameMatches match_predictions(const Matrix& distance, const std::vector<double>& confidence, double threshold) {
  const int64_t num_gts = distance.rows, num_preds = static_cast<int64_t>(confidence.size());
  FrameMatches m;
  m.confidence = confidence;
  m.tp.assign(confidence.size(), 0.0f);
  m.fp.assign(confidence.size(), 0.0f);
  m.gt_index.assign(confidence.size(), -1);
  if (num_gts == 0) {
    std::fill(m.fp.begin(), m.fp.end(), 1.0f);
    return m;
  }
  if (num_preds == 0) return m;
  // distance.min(0) / argmin(0): a NaN wins, like numpy's.
  std::vector<double> dist_min(static_cast<size_t>(num_preds));
  std::vector<int64_t> dist_idx(static_cast<size_t>(num_preds));
  for (int64_t j = 0; j < num_preds; ++j) {
    int64_t best = 0;
    for (int64_t i = 1; i < num_gts && !std::isnan(distance(best, j)); ++i)
      if (std::isnan(distance(i, j)) || distance(i, j) < distance(best, j)) best = i;
    dist_min[static_cast<size_t>(j)] = distance(best, j);
    dist_idx[static_cast<size_t>(j)] = best;
  }
  std::vector<char> covered(static_cast<size_t>(num_gts), 0);
  for (size_t i : by_descending_confidence(confidence)) {
    const auto g = static_cast<size_t>(dist_idx[i]);
    if (dist_min[i] < threshold && !covered[g]) {
      covered[g] = 1;
      m.tp[i] = 1.0f;
      m.gt_index[i] = dist_idx[i];
    } else {
      m.fp[i] = 1.0f;
    }
  }
  return m;
}

float average_precision(const std::vector<FrameMatches>& frames, int64_t num_gts) {
  std::vector<double> confidence;
  std::vector<float> tp, fp;
  for (const auto& f : frames) {
    confidence.insert(confidence.end(), f.confidence.begin(), f.confidence.end());
    tp.insert(tp.end(), f.tp.begin(), f.tp.end());
    fp.insert(fp.end(), f.fp.begin(), f.fp.end());
  }
  if (tp.empty() && num_gts == 0) return 1.0f;
  const float denom_gt = std::max(static_cast<float>(num_gts), kEps);
  std::vector<float> recalls, precisions;
  float tps = 0.0f, fps = 0.0f;
  for (size_t i : by_descending_confidence(confidence)) {
    tps += tp[i];
    fps += fp[i];
    recalls.push_back(tps / denom_gt);
    precisions.push_back(tps / std::max(tps + fps, kEps));
  }
  return pr_curve(recalls, precisions);
}

float vertex_average_precision(const std::vector<int64_t>& gt, const std::vector<int64_t>& pred,
                               const std::vector<double>& confidence) {
  if (gt.empty() && pred.empty()) return 1.0f;
  if (gt.empty() || pred.empty()) return 0.0f;
  const std::set<int64_t> truth(gt.begin(), gt.end());
  float tps = 0.0f, fps = 0.0f, dot = 0.0f;
  for (size_t i : by_descending_confidence(confidence)) {
    const bool hit = truth.count(pred[i]) > 0;
    (hit ? tps : fps) += 1.0f;
    if (hit) dot += tps / std::max(tps + fps, kEps);  // np.dot(precisions, rel)
  }
  return dot / static_cast<float>(gt.size());
}

}  // namespace halo::eval
