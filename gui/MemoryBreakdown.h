// One rank's memory split into weights / gradients / optimizer state / saved activations /
// transient: as the planner predicts it, and as far as a run's step events measured it.
#pragma once

#include <QString>

#include <array>
#include <optional>
#include <vector>

namespace halo::memory {
struct RankPrediction;
}

namespace halo::gui {

class RunModel;

struct MemoryBreakdown {
  enum Part { Weights, Gradients, Optimizer, Saved, Transient, kParts };
  static QString part_name(int part);
  // Bytes per part (nullopt: not known). A measurement may know only sums of parts: `fixed`
  // is weights + optimizer state (held from step to step), `activations` saved + gradients
  // (made in backward, let go after the update) + transient.
  std::array<std::optional<double>, kParts> parts;
  std::optional<double> fixed, activations;
  double peak = 0;

  static MemoryBreakdown predicted(const memory::RankPrediction& r);
  // From rank `rank`'s step events: its peak; the fixed state where the events carry the
  // step's starting level (memory.step_start, once the optimizer's moments exist), and finer parts where
  // they carry them. Steps after the first are used (the first allocates the state).
  static MemoryBreakdown measured(const RunModel& run, int rank);
  std::optional<double> fixed_sum() const;        // parts or `fixed`
  std::optional<double> activations_sum() const;  // parts or `activations`

  // Relative error of measured vs predicted (measured / predicted - 1) for what both know:
  // each part, the fixed state, the activations, the peak.
  struct Error {
    QString what;
    double predicted = 0, measured = 0, relative = 0;
    bool flagged = false;  // |relative| > 10 %
  };
  static std::vector<Error> errors(const MemoryBreakdown& predicted, const MemoryBreakdown& measured);
};

}  // namespace halo::gui
