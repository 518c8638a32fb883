// HALO_TARGET_CLONES: one copy of a hand-vectorised kernel per instruction set, picked when the
// program loads (GCC's function multiversioning). Sanitizer builds keep one plain copy: their
// runtime starts after the ifunc resolvers run.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define HALO_TARGET_CLONES
#else
#define HALO_TARGET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
