// libFuzzer target over the strict safetensors reader (built with clang, ASan + UBSan):
// any input is either read, every tensor's bytes in bounds, or rejected with a util::Error
// naming the file; anything else (crash, other exception, unnamed file) aborts the run.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/Safetensors.h"
#include "util/Error.h"

namespace {

const std::string& scratch_path() {
  static const std::string p = "/tmp/halo-fuzz-" + std::to_string(::getpid()) + ".safetensors";
  return p;
}

[[noreturn]] void fail(const char* why, const std::string& detail) {
  std::fprintf(stderr, "safetensors fuzz: %s: %s\n", why, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = scratch_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) fail("cannot write", path);
  try {
    const halo::io::SafetensorsFile file = halo::io::read_safetensors(path);
    size_t total = 0;
    for (const auto& [name, t] : file.tensors) {
      size_t n = halo::io::dtype_size(t.dtype);
      for (int64_t d : t.shape) {
        if (d < 0) fail("negative dimension accepted", name);
        n *= static_cast<size_t>(d);
      }
      if (n != t.bytes.size()) fail("shape does not match the bytes", name);
      for (uint8_t b : t.bytes) total += b;  // every byte readable (ASan checks the bounds)
    }
    if (total == SIZE_MAX) std::fprintf(stderr, " ");  // keep the sum alive
  } catch (const halo::util::Error& e) {
    if (std::string(e.what()).find(path) == std::string::npos) fail("error does not name the file", e.what());
  } catch (const std::exception& e) {
    fail("not a util::Error", e.what());
  }
  return 0;
}
