// Bezier lane curves of the OpenLane-V2 baseline: Bernstein basis, sampling a curve's points
// and the endpoint-fixed least-squares fit that turns labelled points into control points.
#pragma once

#include <ATen/core/Tensor.h>

namespace halo::model {

// (points, control) Bernstein basis at t = linspace(0, 1, points).
at::Tensor bernstein_basis(int64_t control, int64_t points, at::ScalarType dtype = at::kFloat);

// (..., control, 3) control points -> (..., points, 3) curve points at evenly spaced t.
at::Tensor bezier_sample(const at::Tensor& control, int64_t points);

// (L, P, 3) points evenly spaced along each lane -> (L, control, 3): first and last control
// point are the lane's end points, the inner ones the least-squares fit at t = k/(P-1).
at::Tensor bezier_fit_endpoint_fixed(const at::Tensor& points, int64_t control);

}  // namespace halo::model
