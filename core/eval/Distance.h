// The devkit's distances (openlanev2/centerline/evaluation/distance.py): discrete Fréchet
// and Chamfer between lane centerlines, relaxed with the distance to the ego vehicle, and
// IoU distance between traffic-element boxes; ground truth is float32 as its collect() stores it.
#pragma once

#include <vector>

#include "data/Frame.h"
#include "eval/Matrix.h"
#include "eval/Predictions.h"

namespace halo::eval {

// Points as the devkit holds them: ground truth rounded to float32, predictions as float64.
using Curve = std::vector<data::Vec3>;

// similaritymeasures.frechet_dist(pred, gt, p=2): discrete Fréchet distance.
double frechet_distance(const Curve& gt, const Curve& pred);
// distance.chamfer_distance: mean of both directed nearest-point means (a closed gt loses its last point).
double chamfer_distance(const Curve& gt, const Curve& pred);
// max(0.5, 1 - 5e-3 * nearest distance of the gt curve to the ego origin).
double relaxation_factor(const Curve& gt);
// 1 - IoU of boxes (x1, y1, x2, y2); gt values are float32, mixed arithmetic as numpy does it.
double iou_distance(const std::array<double, 4>& gt, const std::array<double, 4>& pred);

// gt x pred relaxed Fréchet distances; 1024 where the relaxed Chamfer distance is not < 3 m.
Matrix lane_distances(const std::vector<data::LaneCenterline>& gt, const std::vector<LanePrediction>& pred);
// gt x pred IoU distances.
Matrix element_distances(const std::vector<data::TrafficElement>& gt, const std::vector<ElementPrediction>& pred);

}  // namespace halo::eval
