// HALO_TARGET_CLONES: one copy of a hand-vectorised kernel per instruction set, picked when the
// program loads (GCC's function multiversioning). Sanitizer builds keep one plain copy: their
// runtime starts after the ifunc resolvers run.
#pragma once

// HALO_TARGET_CLONES_FMA adds fused multiply-add: GCC then contracts a * b + c (C++'s default),
// which rounds once where the plain copies round twice. It is for kernels held to an error
// bound (GELU); kernels pinned bit for bit to a reference keep HALO_TARGET_CLONES and their
// files are listed in halo_pinned_bits() (cmake/HaloModule.cmake): the avx512f clone has FMA.
#if defined(__SANITIZE_ADDRESS__)
#define HALO_TARGET_CLONES
#define HALO_TARGET_CLONES_FMA
#else
#define HALO_TARGET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define HALO_TARGET_CLONES_FMA __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
