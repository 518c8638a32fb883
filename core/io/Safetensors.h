// The safetensors format without LibTorch: dtypes, an atomic writer and a strict,
// fuzz-safe reader (every malformed file is a util::Error naming the file and field).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace halo::io {

// The element types Halo reads and writes, named as safetensors names them.
enum class DType { BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64 };

const char* dtype_name(DType dtype);  // "BOOL", "U8", ..., "BF16", "F32", "F64"
std::optional<DType> dtype_from_name(std::string_view name);
size_t dtype_size(DType dtype);  // bytes per element

// One tensor to write: C-order bytes owned by the caller (nbytes = numel * dtype_size).
struct TensorView {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;
  size_t nbytes;
};

// One tensor read back, owning its C-order bytes.
struct TensorData {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;  // the header's __metadata__ (may be empty)
  std::map<std::string, TensorData> tensors;
};

// Writes `tensors` (laid out in the order given) and `metadata` (omitted when empty).
// Atomic: a temporary file in the same folder is written, fsynced and renamed over
// `path`; any failure leaves an existing file at `path` untouched.
void write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                       const std::map<std::string, std::string>& metadata);

// Strict reader. Checks the header length against the file, the JSON, dtype names,
// shape * dtype size against each byte range, that the byte ranges tile the data
// section from 0 with no gaps, overlaps or trailing bytes, unique names and that
// __metadata__ maps strings to strings. Allocations never exceed the file's size.
SafetensorsFile read_safetensors(const std::string& path);

}  // namespace halo::io
