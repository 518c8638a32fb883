// SHA-256 (FIPS 180-4), self-contained: artifacts in the history carry their file's hash.
// Incremental: update() any number of times, then hex().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace halo::store {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  std::string hex();  // finishes; call once
  static std::string of(const std::string& bytes);
  static std::optional<std::string> of_file(const std::string& path);  // nullopt if unreadable

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t used_ = 0;
  uint64_t total_ = 0;
};

}  // namespace halo::store
