// it/s from step numbers over wall time, so runs that log every k steps count k per event;
// the ETA is the steps left at that rate.
#include "RunProgress.h"

#include <algorithm>
#include <cmath>

#include "RunModel.h"

namespace halo::gui {

RunProgress RunProgress::of(const RunModel& run) {
  RunProgress p;
  const auto& steps = run.steps();
  const auto& times = run.times();
  if (run.config().contains("schedule") && run.config()["schedule"].is_object())
    p.total = run.config()["schedule"].value("steps", int64_t{0});
  if (steps.empty()) return p;
  p.reached = static_cast<int64_t>(steps.back()) + 1;
  const size_t n = std::min(steps.size(), times.size());
  const size_t from = n > 20 ? n - 20 : 0;
  if (n >= 2 && times[n - 1] > times[from]) p.it_per_s = (steps[n - 1] - steps[from]) / (times[n - 1] - times[from]);
  if (p.it_per_s <= 0 && run.mean_step_ms(0) > 0) p.it_per_s = 1000.0 / run.mean_step_ms(0);
  return p;
}

RunProgress RunProgress::of(int64_t reached, int64_t total, double mean_step_ms) {
  return {reached, total, mean_step_ms > 0 ? 1000.0 / mean_step_ms : 0};
}

double RunProgress::eta_s() const {
  if (it_per_s <= 0 || total <= 0) return -1;
  return static_cast<double>(std::max<int64_t>(0, total - reached)) / it_per_s;
}

QString RunProgress::duration_text(double s) {
  const int64_t t = static_cast<int64_t>(std::llround(std::max(0.0, s)));
  const int64_t h = t / 3600, m = (t / 60) % 60, sec = t % 60;
  return h > 0 ? QString("%1:%2:%3").arg(h).arg(m, 2, 10, QChar('0')).arg(sec, 2, 10, QChar('0'))
               : QString("%1:%2").arg(m).arg(sec, 2, 10, QChar('0'));
}

QString RunProgress::text(bool running) const {
  const QString of_total = total > 0 ? QString(" of %1").arg(total) : QString();
  if (!running) return QString("%1%2 steps").arg(reached).arg(of_total);
  QString out = QString("step %1%2").arg(reached).arg(of_total);
  if (it_per_s > 0) out += QString::fromUtf8(" · %1 it/s").arg(it_per_s, 0, 'f', it_per_s < 10 ? 2 : 1);
  if (eta_s() >= 0) out += QString::fromUtf8(" · ETA %1").arg(duration_text(eta_s()));
  return out;
}

}  // namespace halo::gui
