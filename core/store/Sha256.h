// SHA-256 of bytes or of a file through OpenSSL's libcrypto (EVP): artifacts in the history
// carry their file's hash. Incremental: update() any number of times, then hex().
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace halo::store {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t n);
  std::string hex();  // finishes; call once
  static std::string of(const std::string& bytes);
  static std::optional<std::string> of_file(const std::string& path);  // nullopt if unreadable

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
};

}  // namespace halo::store
