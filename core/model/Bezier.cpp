// Bernstein polynomials in float64, cast to the caller's dtype; the fit solves the normal
// equations with the inner columns' Gram matrix (small: control x points).
#include "model/Bezier.h"

#include <torch/torch.h>

namespace halo::model {

at::Tensor bernstein_basis(int64_t control, int64_t points, at::ScalarType dtype) {
  const int64_t n = control - 1;
  at::Tensor t = torch::linspace(0.0, 1.0, points, torch::kFloat64).unsqueeze(1);  // (P, 1)
  at::Tensor k = torch::arange(control, torch::kFloat64).unsqueeze(0);             // (1, C)
  at::Tensor binom = torch::exp(torch::lgamma(torch::tensor(n + 1.0, torch::kFloat64)) - torch::lgamma(k + 1) -
                                torch::lgamma(n - k + 1));
  return (binom.round() * t.pow(k) * (1 - t).pow(n - k)).to(dtype);  // (P, C); 0^0 = 1
}

at::Tensor bezier_sample(const at::Tensor& control, int64_t points) {
  at::Tensor basis = bernstein_basis(control.size(-2), points, control.scalar_type()).to(control.device());
  return torch::matmul(basis, control);  // (..., P, 3)
}

at::Tensor bezier_fit_endpoint_fixed(const at::Tensor& points, int64_t control) {
  const int64_t P = points.size(1);
  at::Tensor basis = bernstein_basis(control, P, torch::kFloat64).to(points.device());         // (P, C)
  at::Tensor pts = points.to(torch::kFloat64);                                                 // (L, P, 3)
  at::Tensor first = pts.select(1, 0).unsqueeze(1), last = pts.select(1, P - 1).unsqueeze(1);  // (L, 1, 3)
  at::Tensor rest =
      pts - basis.select(1, 0).view({1, P, 1}) * first - basis.select(1, control - 1).view({1, P, 1}) * last;
  at::Tensor A = basis.narrow(1, 1, control - 2);                                 // (P, C-2)
  at::Tensor inner = torch::matmul(torch::inverse(A.t().mm(A)).mm(A.t()), rest);  // (L, C-2, 3)
  return torch::cat({first, inner, last}, 1).to(points.scalar_type());
}

}  // namespace halo::model
