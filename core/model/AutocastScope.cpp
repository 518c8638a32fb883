// Sets and restores LibTorch's thread-local autocast state (at::autocast) for one device.
#include "model/AutocastScope.h"

#include <ATen/autocast_mode.h>

namespace halo::model {

AutocastScope::AutocastScope(c10::DeviceType device, bool on, c10::ScalarType dtype)
    : device_(device),
      was_on_(at::autocast::is_autocast_enabled(device)),
      was_dtype_(at::autocast::get_autocast_dtype(device)) {
  at::autocast::set_autocast_enabled(device_, on);
  if (on) at::autocast::set_autocast_dtype(device_, dtype);
}

AutocastScope::~AutocastScope() {
  at::autocast::set_autocast_enabled(device_, was_on_);
  at::autocast::set_autocast_dtype(device_, was_dtype_);
  if (!was_on_) at::autocast::clear_cache();
}

}  // namespace halo::model
