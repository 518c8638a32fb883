// safetensors dtypes and the writer: 8-byte little-endian header length, JSON header
// padded with spaces to a multiple of 8, then the tensors' C-order bytes in order given.
#include "io/Safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <nlohmann/json.hpp>
#include <set>

#include "io/AtomicFile.h"
#include "util/Error.h"

namespace halo::io {

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr std::array<DTypeInfo, 13> kDTypes{{
    {DType::BOOL, "BOOL", 1},
    {DType::U8, "U8", 1},
    {DType::I8, "I8", 1},
    {DType::I16, "I16", 2},
    {DType::U16, "U16", 2},
    {DType::I32, "I32", 4},
    {DType::U32, "U32", 4},
    {DType::I64, "I64", 8},
    {DType::U64, "U64", 8},
    {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},
    {DType::F32, "F32", 4},
    {DType::F64, "F64", 8},
}};

const DTypeInfo& info(DType dtype) {
  for (const auto& i : kDTypes) {
    if (i.dtype == dtype) return i;
  }
  throw util::Error(fmt::format("unknown DType value {}", static_cast<int>(dtype)));
}

// numel * dtype size for `shape`, or nullopt on a negative dimension or overflow.
std::optional<uint64_t> byte_size(const std::vector<int64_t>& shape, DType dtype) {
  uint64_t n = dtype_size(dtype);
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return std::nullopt;
  }
  return n;
}

std::string shape_str(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

void check_views(const std::string& path, const std::vector<TensorView>& tensors) {
  std::set<std::string_view> names;
  for (const auto& t : tensors) {
    std::string where = fmt::format("cannot write '{}': tensor '{}'", path, t.name);
    if (t.name == "__metadata__") {
      throw util::Error(where + ": the name is reserved for the metadata", "rename the tensor");
    }
    if (!names.insert(t.name).second) {
      throw util::Error(where + " appears twice", "give every tensor a unique name");
    }
    auto expected = byte_size(t.shape, t.dtype);
    if (!expected) {
      throw util::Error(fmt::format("{}: shape {} has a negative dimension or overflows", where, shape_str(t.shape)));
    }
    if (*expected != t.nbytes) {
      throw util::Error(fmt::format("{}: shape {} of {} needs {} bytes but {} were given", where, shape_str(t.shape),
                                    dtype_name(t.dtype), *expected, t.nbytes));
    }
    if (t.nbytes > 0 && t.data == nullptr) {
      throw util::Error(where + ": data is null");
    }
  }
}

std::string header_json(const std::string& path, const std::vector<TensorView>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {
        {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.nbytes}}};
    offset += t.nbytes;
  }
  try {
    return header.dump();
  } catch (const nlohmann::json::exception& e) {
    throw util::Error(
        fmt::format("cannot write '{}': a tensor name or metadata string is not valid UTF-8 ({})", path, e.what()),
        "safetensors headers are JSON: use UTF-8 names and metadata");
  }
}

}  // namespace

const char* dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& i : kDTypes) {
    if (name == i.name) return i.dtype;
  }
  return std::nullopt;
}

size_t dtype_size(DType dtype) { return info(dtype).size; }

void write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  check_views(path, tensors);
  std::string header = header_json(path, tensors, metadata);
  header.append((8 - header.size() % 8) % 8, ' ');
  uint64_t n = header.size();
  std::array<uint8_t, 8> length{};
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(n >> (8 * i));

  AtomicFile file(path);
  file.write(length.data(), length.size());
  file.write(header.data(), header.size());
  for (const auto& t : tensors) {
    if (t.nbytes > 0) file.write(t.data, t.nbytes);
  }
  file.commit();
}

}  // namespace halo::io
