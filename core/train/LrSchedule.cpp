// Warm-up + cosine, as timm's CosineLRScheduler with warmup_prefix and no restarts.
// Step 0 of warm-up already gets 1/warmup of the peak so no step is wasted at lr 0.
#include "train/LrSchedule.h"

#include <algorithm>
#include <cmath>

namespace halo::train {

double LrSchedule::at(int64_t step) const {
  if (step < warmup_steps) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  const int64_t span = std::max<int64_t>(1, total_steps - warmup_steps - 1);
  const double t = std::min(1.0, static_cast<double>(step - warmup_steps) / static_cast<double>(span));
  const double floor = peak * min_lr_ratio;
  return floor + 0.5 * (peak - floor) * (1.0 + std::cos(M_PI * t));
}

double scaled_lr(double lr, int64_t global_batch, int64_t base_batch) {
  return base_batch > 0 ? lr * static_cast<double>(global_batch) / static_cast<double>(base_batch) : lr;
}

}  // namespace halo::train
