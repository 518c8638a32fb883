// The synthetic generator's random numbers: splitmix64, so a dataset is the same function
// of its seed on every platform and standard library (std:: distributions are not).
#pragma once

#include <cstdint>

namespace halo::data {

class SynthRandom {
 public:
  explicit SynthRandom(uint64_t seed) : state_(seed) {}
  // A stream derived from (seed, a, b): independent streams per segment / purpose.
  SynthRandom(uint64_t seed, uint64_t a, uint64_t b = 0) : state_(seed) {
    state_ = next() ^ (a * 0x9E3779B97F4A7C15ULL);
    state_ = next() ^ (b * 0xC2B2AE3D27D4EB4FULL);
  }
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi).
  double uniform(double lo = 0.0, double hi = 1.0) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  // Uniform integer in [lo, hi].
  int64_t integer(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(double p) { return uniform() < p; }

 private:
  uint64_t state_;
};

}  // namespace halo::data
