// Predicted parts come straight from memory::RankPrediction (inputs count as saved: they are
// held through backward like saved tensors; gradients are those backward made by the peak);
// transient is what the peak adds above them.
#include "MemoryBreakdown.h"

#include <QObject>

#include <algorithm>
#include <cmath>
#include <vector>

#include "RunModel.h"
#include "memory/MemoryPlanner.h"

namespace halo::gui {

QString MemoryBreakdown::part_name(int part) {
  static const char* names[] = {"weights", "gradients", "optimizer state", "saved activations", "transient"};
  return QObject::tr(names[std::clamp(part, 0, kParts - 1)]);
}

MemoryBreakdown MemoryBreakdown::predicted(const memory::RankPrediction& r) {
  MemoryBreakdown b;
  const double grads = static_cast<double>(r.gradients + r.gradients_at_peak);
  // Saved when backward begins; a peak later in backward (gradients made, some saved ones
  // freed) holds at most what is left beside its gradients.
  const double saved = std::min(static_cast<double>(r.inputs + r.saved_activations),
                                std::max(0.0, static_cast<double>(r.activation_peak) - grads));
  b.parts[Weights] = static_cast<double>(r.weights);
  b.parts[Gradients] = grads;
  b.parts[Optimizer] = static_cast<double>(r.optimizer_state + r.scaler_and_buffers);
  b.parts[Saved] = saved;
  b.parts[Transient] = std::max(0.0, static_cast<double>(r.activation_peak) - saved - grads);
  b.peak = static_cast<double>(r.peak);
  return b;
}

MemoryBreakdown MemoryBreakdown::measured(const RunModel& run, int rank) {
  MemoryBreakdown b;
  if (rank < 0 || static_cast<size_t>(rank) >= run.ranks().size()) return b;
  const RankSeries& s = run.ranks()[static_cast<size_t>(rank)];
  const size_t from = s.mem_peak.size() > 1 ? 1 : 0;
  for (size_t i = from; i < s.mem_peak.size(); ++i) {
    b.peak = std::max(b.peak, s.mem_peak[i]);
    const double start = i < s.mem_step_start.size() ? s.mem_step_start[i] : 0;
    if (start <= 0 || i == 0) continue;  // step 0 starts before the optimizer's moments exist
    b.fixed = std::max(b.fixed.value_or(0), start);
    b.activations = std::max(b.activations.value_or(0), s.mem_peak[i] - start);
  }
  return b;
}

std::optional<double> MemoryBreakdown::fixed_sum() const {
  if (parts[Weights] && parts[Optimizer]) return *parts[Weights] + *parts[Optimizer];
  return fixed;
}

std::optional<double> MemoryBreakdown::activations_sum() const {
  if (parts[Saved] && parts[Gradients] && parts[Transient])
    return *parts[Saved] + *parts[Gradients] + *parts[Transient];
  return activations;
}

std::vector<MemoryBreakdown::Error> MemoryBreakdown::errors(const MemoryBreakdown& p, const MemoryBreakdown& m) {
  std::vector<Error> out;
  auto add = [&](const QString& what, std::optional<double> pv, std::optional<double> mv) {
    if (!pv || !mv || *pv <= 0) return;
    const double rel = *mv / *pv - 1;
    out.push_back({what, *pv, *mv, rel, std::fabs(rel) > 0.10});
  };
  for (int i = 0; i < kParts; ++i) add(part_name(i), p.parts[static_cast<size_t>(i)], m.parts[static_cast<size_t>(i)]);
  if (!m.parts[Weights]) add(QObject::tr("weights + optimizer state"), p.fixed_sum(), m.fixed_sum());
  if (!m.parts[Saved])
    add(QObject::tr("activations (saved + gradients + transient)"), p.activations_sum(), m.activations_sum());
  add(QObject::tr("peak"), p.peak, m.peak > 0 ? std::optional<double>(m.peak) : std::nullopt);
  return out;
}

}  // namespace halo::gui
