// Resampling a 3-D polyline to n points evenly spaced along its length (lane centerlines:
// 201 points in the files, 11 for the model).
#pragma once

#include <vector>

#include "data/Frame.h"

namespace halo::data {

// n >= 2 points at equal arc-length steps; the first and last input points are kept exactly.
// A polyline of zero length repeats its first point.
std::vector<Vec3> resample_polyline(const std::vector<Vec3>& points, int n);

// Length of the polyline (m).
double polyline_length(const std::vector<Vec3>& points);

}  // namespace halo::data
