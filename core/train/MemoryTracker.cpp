// The counting allocator delegates to the CPU allocator that was installed before it and
// keeps atomic current/peak counters; each block carries its size in the DataPtr context.
#include "train/MemoryTracker.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include <c10/core/CPUAllocator.h>
#ifdef HALO_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace halo::train {

namespace {

std::atomic<int64_t> g_current{0};
std::atomic<int64_t> g_peak{0};
std::atomic<int64_t> g_window{0};  // take_window_high()'s peak

void raise_to(std::atomic<int64_t>& peak, int64_t now) {
  int64_t p = peak.load();
  while (now > p && !peak.compare_exchange_weak(p, now)) {}
}

// Context == data pointer (LibTorch's raw_allocate requires it): sizes and the inner
// deleters live in a side table.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}

  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr inner = base_->allocate(n);
    void* ptr = inner.get();
    if (ptr == nullptr || inner.get_context() != ptr) return inner;  // not ours to count
    c10::DeleterFnPtr del = inner.get_deleter();
    inner.release_context();
    {
      std::lock_guard<std::mutex> lock(mutex());
      blocks()[ptr] = {static_cast<int64_t>(n), del};
    }
    const int64_t now = g_current.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
    raise_to(g_peak, now);
    raise_to(g_window, now);
    return {ptr, ptr, &CountingAllocator::release, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &CountingAllocator::release; }

  void copy_data(void* dest, const void* src, std::size_t count) const override { base_->copy_data(dest, src, count); }

 private:
  struct Block {
    int64_t bytes;
    c10::DeleterFnPtr deleter;
  };
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::unordered_map<void*, Block>& blocks() {
    static auto* b = new std::unordered_map<void*, Block>();
    return *b;
  }
  static void release(void* ptr) {
    Block b{0, nullptr};
    {
      std::lock_guard<std::mutex> lock(mutex());
      auto it = blocks().find(ptr);
      if (it == blocks().end()) return;
      b = it->second;
      blocks().erase(it);
    }
    g_current.fetch_sub(b.bytes);
    if (b.deleter) b.deleter(ptr);
  }
  c10::Allocator* base_;
};

}  // namespace

void MemoryTracker::install() {
  static CountingAllocator* installed = [] {
    auto* a = new CountingAllocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(a, /*priority=*/100);
    return a;
  }();
  (void)installed;
}

int64_t MemoryTracker::rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

MemorySample MemoryTracker::cpu() {
  const int64_t rss = rss_bytes();
  return {g_current.load(), g_peak.load(), rss, rss};
}

MemorySample MemoryTracker::cuda(int device) {
  MemorySample s;
#ifdef HALO_WITH_CUDA
  using c10::CachingDeviceAllocator::StatType;
  // Before CUDA's lazy start the caching allocator knows no device ("Invalid device argument")
  // and holds nothing: zeros, without starting CUDA here.
  if (!c10::cuda::CUDACachingAllocator::get()->initialized()) return {0, 0, 0, rss_bytes()};
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  const auto agg = static_cast<size_t>(StatType::AGGREGATE);
  s.current = stats.allocated_bytes[agg].current;
  s.peak = stats.allocated_bytes[agg].peak;
  s.reserved = stats.reserved_bytes[agg].current;
#else
  (void)device;
#endif
  s.rss = rss_bytes();
  return s;
}

int64_t MemoryTracker::take_window_high() {
  const int64_t now = g_current.load();
  return std::max(g_window.exchange(now), now);
}

void MemoryTracker::reset_peak() {
  g_peak.store(g_current.load());
#ifdef HALO_WITH_CUDA
  if (c10::cuda::CUDACachingAllocator::get()->initialized())  // else nothing was allocated
    for (int d = 0; d < c10::cuda::device_count(); ++d)
      c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(d));
#endif
}

}  // namespace halo::train
