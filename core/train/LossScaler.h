// Dynamic loss scaling for fp16: scale up after a run of finite steps, back off and skip
// on inf/NaN. The skip decision is agreed by every rank (an all-reduce of the flag).
#pragma once

#include <cstdint>

namespace halo::train {

class LossScaler {
 public:
  explicit LossScaler(bool enabled, double init_scale = 65536.0, int64_t growth_interval = 2000);

  double scale() const { return enabled_ ? scale_ : 1.0; }
  bool enabled() const { return enabled_; }
  // After the (agreed) overflow check: returns true when the optimizer step must be skipped.
  bool update(bool found_non_finite);
  int64_t good_steps() const { return good_; }
  void restore(double scale, int64_t good_steps) {
    scale_ = scale;
    good_ = good_steps;
  }

 private:
  bool enabled_;
  double scale_;
  int64_t growth_interval_;
  int64_t good_ = 0;
};

}  // namespace halo::train
