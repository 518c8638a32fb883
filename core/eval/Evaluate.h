// The OpenLane-V2 score of predictions against ground-truth frames, exactly as the official
// openlanev2 devkit 2.1.0 (centerline.evaluation.evaluate) computes it; used by `halo eval`
// and by evaluation during training.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/Frame.h"
#include "eval/Predictions.h"

namespace halo::eval {

struct Scores {
  double det_l = 0;   // lane detection: mean AP over Fréchet thresholds 1, 2, 3 m
  double det_t = 0;   // traffic elements: mean over the 13 attributes of AP at IoU distance 0.75
  double top_ll = 0;  // lane-lane topology: mean per-vertex AP after matching
  double top_lt = 0;  // lane-element topology: mean per-vertex AP after matching
  double ols = 0;     // mean(det_l, det_t, sqrt(top_ll), sqrt(top_lt))
  std::array<double, 13> det_t_per_attribute{};  // AP per attribute (1 where it has no gt and no prediction)
  int64_t frames = 0;
};

// Scores `pred` (one entry per ground-truth frame, keyed by Frame::key()) against `gt`, whose
// frames must carry annotation. Throws util::Error naming the frame and field when a frame
// is missing on either side or a prediction is malformed (shapes, ids, non-finite values).
// Tied confidences are ranked in input order (numpy's unstable argsort leaves them unspecified).
// Frames' distances are computed on all hardware threads; `progress` (optional) is called,
// one call at a time, after each frame's distances: (frames done, frames total).
using Progress = std::function<void(int64_t done, int64_t total)>;
Scores evaluate(const std::vector<data::Frame>& gt, const Predictions& pred, const Progress& progress = {});

// Checks one frame's prediction: non-empty finite lane points, finite boxes and confidences,
// unique ids over lanes and elements, topology matrices of lanes x lanes and lanes x elements.
void check_prediction(const std::string& key, const FramePrediction& p);

}  // namespace halo::eval
