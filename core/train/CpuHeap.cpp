// mallopt(3): no mmap-served blocks, no trimming of the heap's top.
#include "train/CpuHeap.h"

#include <malloc.h>

#include <cstdlib>
#include <string_view>

namespace halo::train {

bool keep_freed_cpu_memory() {
  if (const char* e = std::getenv("HALO_CPU_HEAP"); e && std::string_view(e) == "system") return false;
  // Trimming off (the largest threshold mallopt takes), then every block from the heap.
  const bool trim = ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(~0U >> 1)) == 1;
  const bool mmap = ::mallopt(M_MMAP_MAX, 0) == 1;
  return trim && mmap;
}

}  // namespace halo::train
