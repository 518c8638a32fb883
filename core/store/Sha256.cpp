// The digest is OpenSSL's (EVP_sha256); this file only adapts its context to the class and
// reads files in 1 MiB chunks. Checked against the standard test vectors in tests/store.
#include "store/Sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

namespace halo::store {

struct Sha256::Context {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Context>()) {
  if (!ctx_->md || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL could not start a SHA-256 digest");
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, size_t n) { EVP_DigestUpdate(ctx_->md, data, n); }

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, digest, &len);
  static const char* hexdigits = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hexdigits[digest[i] >> 4];
    out += hexdigits[digest[i] & 15];
  }
  return out;
}

std::string Sha256::of(const std::string& bytes) {
  Sha256 s;
  s.update(bytes.data(), bytes.size());
  return s.hex();
}

std::optional<std::string> Sha256::of_file(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return std::nullopt;
  Sha256 s;
  std::vector<char> buf(1 << 20);
  while (size_t n = std::fread(buf.data(), 1, buf.size(), f.get())) s.update(buf.data(), n);
  if (std::ferror(f.get())) return std::nullopt;
  return s.hex();
}

}  // namespace halo::store
