// Autocast on one device for one scope, the previous state restored at its end: the
// trainer's forward and a checkpointed segment's recompute in the backward both use it.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace halo::model {

class AutocastScope {
 public:
  // on: autocast to `dtype` inside the scope; off: plain precision inside it.
  AutocastScope(c10::DeviceType device, bool on, c10::ScalarType dtype);
  // Restores the previous state; clears the cast cache when autocast ends off there, so no
  // cast of a weight survives its next update.
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool was_on_;
  c10::ScalarType was_dtype_;
};

}  // namespace halo::model
