// Growth factor 2, back-off 0.5, as torch.amp.GradScaler's defaults.
// With scaling off (fp32/bf16) non-finite gradients still skip the step.
#include "train/LossScaler.h"

namespace halo::train {

LossScaler::LossScaler(bool enabled, double init_scale, int64_t growth_interval)
    : enabled_(enabled), scale_(init_scale), growth_interval_(growth_interval) {}

bool LossScaler::update(bool found_non_finite) {
  if (found_non_finite) {
    if (enabled_) scale_ *= 0.5;
    good_ = 0;
    return true;
  }
  if (enabled_ && ++good_ >= growth_interval_) {
    scale_ *= 2.0;
    good_ = 0;
  }
  return false;
}

}  // namespace halo::train
