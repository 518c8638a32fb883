// Where a run stands: steps reached of the schedule's total, iterations per second and the
// time left, from a live RunModel or from the history's numbers (one text for both views).
#pragma once

#include <QString>

#include <cstdint>

namespace halo::gui {

class RunModel;

struct RunProgress {
  int64_t reached = 0;  // steps done (last logged step + 1)
  int64_t total = 0;    // schedule.steps; 0 when unknown
  double it_per_s = 0;  // steps per second; 0 when unknown

  // Rank 0's step numbers and wall times over the last 20 logged steps (step times when
  // the events carry no time stamps).
  static RunProgress of(const RunModel& run);
  static RunProgress of(int64_t reached, int64_t total, double mean_step_ms);
  double eta_s() const;  // seconds left at it_per_s; -1 when unknown
  // "step 20 of 60 · 3.2 it/s · ETA 0:13"; finished runs: "60 of 60 steps".
  QString text(bool running) const;
  static QString duration_text(double seconds);  // "0:13", "12:05", "1:02:03"
};

}  // namespace halo::gui
