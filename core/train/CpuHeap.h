// The process heap's policy for tensor memory on CPU: keep freed blocks for the next step
// instead of handing them back to the kernel and faulting them in again.
#pragma once

namespace halo::train {

// glibc serves blocks over its mmap threshold with fresh mappings and trims the heap's top on
// free, so every step's large activations page-fault in again (timm convnext_atto's step on
// the quickstart batch: 14 % of it, `docs/measurements.md`). This keeps every freed block in
// the heap: resident memory stays at the step's high-water mark, as a caching allocator's
// does. HALO_CPU_HEAP=system leaves glibc's defaults (for comparison). Returns whether it
// changed anything.
bool keep_freed_cpu_memory();

}  // namespace halo::train
