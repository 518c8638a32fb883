// Process memory as Halo reports it: on CPU a counting allocator installed in front of
// LibTorch's (current and peak bytes of tensors) plus RSS; on CUDA the caching allocator's
// allocated/reserved current and peak.
#pragma once

#include <cstdint>

namespace halo::train {

struct MemorySample {
  int64_t current = 0;   // bytes of live tensors (CPU: counted; CUDA: allocated)
  int64_t peak = 0;      // since the last reset_peak()
  int64_t reserved = 0;  // CUDA: reserved by the caching allocator; CPU: RSS
  int64_t rss = 0;       // resident set size of the process
};

class MemoryTracker {
 public:
  // Installs the counting CPU allocator (idempotent; once per process).
  static void install();
  static MemorySample cpu();
  static MemorySample cuda(int device);  // zeros when built without CUDA
  static void reset_peak();              // CPU counter and CUDA device 0..n peaks
  // CPU: the most bytes live since the previous call (a window of its own, apart from the
  // peak), then a new window starts at the current bytes. The memory timeline's "high".
  static int64_t take_window_high();
  static int64_t rss_bytes();
};

}  // namespace halo::train
