// Learning-rate schedule: linear warm-up from 0 to the peak, then cosine to
// min_lr_ratio * peak at the last step. A pure function of the step.
#pragma once

#include <cstdint>

namespace halo::train {

struct LrSchedule {
  double peak = 1e-3;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  double min_lr_ratio = 0.0;

  double at(int64_t step) const;  // step counted from 0
};

// Linear scaling rule: lr * global_batch / base_batch.
double scaled_lr(double lr, int64_t global_batch, int64_t base_batch);

}  // namespace halo::train
