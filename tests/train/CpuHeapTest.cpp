// keep_freed_cpu_memory: after it, a block far over glibc's mmap threshold comes from the heap
// and stays there when freed, so the next one like it faults no page in.
#include "train/CpuHeap.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace halo::train {
namespace {

TEST(CpuHeap, LargeBlocksStayInTheHeap) {
  ::unsetenv("HALO_CPU_HEAP");  // its opt-out
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_FALSE(keep_freed_cpu_memory());  // the sanitizer's allocator takes no mallopt
#else
  ASSERT_TRUE(keep_freed_cpu_memory());
  const size_t n = 64u << 20;  // 64 MiB: glibc's default would map it
  const struct mallinfo2 before = ::mallinfo2();
  char* p = static_cast<char*>(std::malloc(n));
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, n);
  const struct mallinfo2 held = ::mallinfo2();
  EXPECT_EQ(held.hblkhd, before.hblkhd) << "the block was mapped, not taken from the heap";
  // From the heap's in-use bytes (the heap may hold free space from earlier tests in this
  // process, so the arena need not grow).
  EXPECT_GE(held.uordblks, before.uordblks + n);
  std::free(p);
  const struct mallinfo2 after = ::mallinfo2();
  EXPECT_EQ(after.arena, held.arena) << "the heap was trimmed: the next step faults the pages in again";
  EXPECT_GE(after.fordblks, held.fordblks + n);
#endif
}

}  // namespace
}  // namespace halo::train
