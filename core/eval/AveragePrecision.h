// The devkit's precision/recall pieces (evaluate.py _tpfp, _AP, _pr_curve and
// _average_precision_per_vertex), in float32 where numpy computes them in float32.
#pragma once

#include <cstdint>
#include <vector>

#include "eval/Matrix.h"

namespace halo::eval {

// One frame's predictions after greedy matching at one distance threshold.
struct FrameMatches {
  std::vector<double> confidence;  // per prediction, in the prediction's order
  std::vector<float> tp, fp;       // 0/1 per prediction
  std::vector<int64_t> gt_index;   // matched ground truth per prediction, -1 when none
};

// _tpfp: predictions in descending confidence (ties keep their order) take the nearest
// ground truth (gt x pred `distance`) when it is closer than `threshold` and still free.
FrameMatches match_predictions(const Matrix& distance, const std::vector<double>& confidence, double threshold);

// _AP over frames: 11-point interpolated AP of all predictions ranked by confidence;
// 1 when there is neither a ground truth nor a prediction.
float average_precision(const std::vector<FrameMatches>& frames, int64_t num_gts);

// _average_precision_per_vertex: AP of the predicted neighbour indices `pred` (scored by
// `confidence`) of one vertex against its true neighbours `gt`.
float vertex_average_precision(const std::vector<int64_t>& gt, const std::vector<int64_t>& pred,
                               const std::vector<double>& confidence);

}  // namespace halo::eval
