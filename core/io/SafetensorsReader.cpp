// read_safetensors(): a strict reader that trusts nothing in the file. Every size is
// checked against the real file size before anything is allocated or read.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "io/Safetensors.h"
#include "util/Error.h"

namespace halo::io {

namespace {

using json = nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the limit of the reference implementation
constexpr int kMaxJsonDepth = 8;                  // a valid header nests 3 deep

const char* kHint = "the file is damaged or was not written as safetensors; re-export it";

// Values quoted in messages are clipped: a forged header may hold megabyte-long strings.
std::string clip(std::string s) {
  constexpr size_t kMax = 120;
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  return s;
}

struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin;
  uint64_t end;
};

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  ~Reader() {
    if (fd_ >= 0) ::close(fd_);
  }

  SafetensorsFile read() {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      throw util::Error(fmt::format("cannot open safetensors file '{}': {}", path_, std::strerror(errno)),
                        "check the path");
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) bad("is not a readable regular file");
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size < 8) bad(fmt::format("is {} bytes long, shorter than the 8-byte header length", size));
    uint8_t len_bytes[8];
    read_at(0, len_bytes, 8, "the header length");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
    if (n > size - 8) {
      bad(fmt::format("header length {} reaches beyond the end of the file ({} bytes)", n, size));
    }
    if (n > kMaxHeaderBytes) bad(fmt::format("header length {} exceeds {} bytes", n, kMaxHeaderBytes));
    std::string header(n, '\0');
    read_at(8, header.data(), n, "the header");
    data_start_ = 8 + n;
    data_size_ = size - data_start_;

    SafetensorsFile out;
    std::vector<Entry> entries = parse_header(header, out.metadata);
    check_layout(entries);
    for (auto& e : entries) {
      TensorData t{e.dtype, std::move(e.shape), std::vector<uint8_t>(e.end - e.begin)};
      if (!t.bytes.empty()) {
        read_at(data_start_ + e.begin, t.bytes.data(), t.bytes.size(), fmt::format("tensor '{}'", e.name));
      }
      out.tensors.emplace(std::move(e.name), std::move(t));
    }
    return out;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    throw util::Error(fmt::format("invalid safetensors file '{}': {}", path_, what), kHint);
  }
  [[noreturn]] void bad_tensor(const std::string& name, const std::string& what) const {
    bad(fmt::format("tensor '{}': {}", clip(name), what));
  }

  void read_at(uint64_t offset, void* dst, size_t n, const std::string& what) const {
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) bad(fmt::format("reading {} failed: {}", what, std::strerror(errno)));
      if (got == 0) bad(fmt::format("the file ended while reading {} (was it truncated?)", what));
      p += got;
      n -= static_cast<size_t>(got);
      offset += static_cast<uint64_t>(got);
    }
  }

  // Parses with a depth limit and rejects duplicate keys in any object (nlohmann would
  // silently keep the last one).
  json parse_json(const std::string& header) const {
    // nlohmann stops at a NUL byte and would accept "{}\0garbage"; JSON text never holds one.
    if (auto nul = header.find('\0'); nul != std::string::npos) {
      bad(fmt::format("the header is not valid JSON: NUL byte at header offset {}", nul));
    }
    std::vector<std::set<std::string>> keys;
    std::string error;
    json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
      if (depth > kMaxJsonDepth) {
        error = fmt::format("the header JSON nests deeper than {} levels", kMaxJsonDepth);
        throw std::runtime_error(error);
      }
      if (event == json::parse_event_t::object_start) keys.emplace_back();
      if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
      if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
        error = fmt::format("key '{}' appears twice in one JSON object{}", clip(parsed.get<std::string>()),
                            keys.size() == 1 ? " (duplicate tensor name)" : "");
        throw std::runtime_error(error);
      }
      return true;
    };
    try {
      return json::parse(header, cb);
    } catch (const json::exception& e) {
      bad(fmt::format("the header is not valid JSON: {}", e.what()));
    } catch (const std::runtime_error&) {
      if (error.empty()) throw;
      bad(error);
    }
  }

  static std::optional<uint64_t> as_uint(const json& v) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
    return std::nullopt;
  }

  Entry parse_entry(const std::string& name, const json& v) const {
    if (!v.is_object()) bad_tensor(name, fmt::format("entry is {}, not an object", v.type_name()));
    for (const auto& [field, _] : v.items()) {
      if (field != "dtype" && field != "shape" && field != "data_offsets") {
        bad_tensor(name, fmt::format("unknown field '{}'", clip(field)));
      }
    }
    for (const char* field : {"dtype", "shape", "data_offsets"}) {
      if (!v.contains(field)) bad_tensor(name, fmt::format("field '{}' is missing", field));
    }
    const json& dt = v.at("dtype");
    if (!dt.is_string()) bad_tensor(name, "field 'dtype' is not a string");
    auto dtype = dtype_from_name(dt.get<std::string>());
    if (!dtype) {
      bad_tensor(name, fmt::format("unknown dtype '{}' (known: BOOL, U8, I8, I16, U16, I32, "
                                   "U32, I64, U64, F16, BF16, F32, F64)",
                                   clip(dt.get<std::string>())));
    }
    Entry e{name, *dtype, {}, 0, 0};
    const json& shape = v.at("shape");
    if (!shape.is_array()) bad_tensor(name, "field 'shape' is not an array");
    uint64_t nbytes = dtype_size(*dtype);
    for (const auto& d : shape) {
      auto dim = as_uint(d);
      if (!dim || *dim > static_cast<uint64_t>(INT64_MAX)) {
        bad_tensor(name, fmt::format("shape entry {} is not a non-negative integer", clip(d.dump())));
      }
      e.shape.push_back(static_cast<int64_t>(*dim));
      if (__builtin_mul_overflow(nbytes, *dim, &nbytes)) {
        bad_tensor(name, fmt::format("shape {} overflows 64-bit sizes", clip(shape.dump())));
      }
    }
    const json& off = v.at("data_offsets");
    const bool pair = off.is_array() && off.size() == 2;
    const std::optional<uint64_t> begin_opt = pair ? as_uint(off[0]) : std::nullopt;
    const std::optional<uint64_t> end_opt = pair ? as_uint(off[1]) : std::nullopt;
    if (!begin_opt || !end_opt) {
      bad_tensor(name, fmt::format("field 'data_offsets' {} is not two non-negative integers", clip(off.dump())));
    }
    const uint64_t begin = begin_opt.value_or(0), end = end_opt.value_or(0);  // present (bad_tensor throws)
    if (begin > end) bad_tensor(name, fmt::format("data_offsets [{}, {}] end before they begin", begin, end));
    if (end > data_size_) {
      bad_tensor(
          name, fmt::format("data_offsets [{}, {}] reach past the end of the data ({} bytes)", begin, end, data_size_));
    }
    if (end - begin != nbytes) {
      bad_tensor(name, fmt::format("shape {} of {} needs {} bytes but data_offsets [{}, {}] hold {}",
                                   clip(shape.dump()), dtype_name(*dtype), nbytes, begin, end, end - begin));
    }
    e.begin = begin;
    e.end = end;
    return e;
  }

  std::vector<Entry> parse_header(const std::string& header, std::map<std::string, std::string>& metadata) const {
    json root = parse_json(header);
    if (!root.is_object()) bad(fmt::format("the header is a JSON {}, not an object", root.type_name()));
    std::vector<Entry> entries;
    for (const auto& [key, value] : root.items()) {
      if (key != "__metadata__") {
        entries.push_back(parse_entry(key, value));
        continue;
      }
      if (!value.is_object()) bad(fmt::format("__metadata__ is {}, not an object", value.type_name()));
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) {
          bad(fmt::format("__metadata__ field '{}' is {} {}, not a string", clip(mk), mv.type_name(), clip(mv.dump())));
        }
        metadata.emplace(mk, mv.get<std::string>());
      }
    }
    return entries;
  }

  // The byte ranges must tile [0, data_size) in some order: no gaps, overlaps or trailing
  // bytes. Empty tensors may sit anywhere on a boundary.
  void check_layout(std::vector<Entry>& entries) const {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
    uint64_t pos = 0;
    const Entry* prev = nullptr;
    for (const auto& e : entries) {
      if (e.begin < pos) {
        bad_tensor(e.name, fmt::format("data_offsets [{}, {}] overlap tensor '{}', which ends at {}", e.begin, e.end,
                                       clip(prev->name), pos));
      }
      if (e.begin > pos) {
        bad_tensor(e.name, fmt::format("data_offsets [{}, {}] leave a gap of {} bytes after "
                                       "offset {}",
                                       e.begin, e.end, e.begin - pos, pos));
      }
      pos = e.end;
      prev = &e;
    }
    if (pos != data_size_) {
      bad(fmt::format("{} bytes after the last tensor (data ends at {}, file data is {} bytes)", data_size_ - pos, pos,
                      data_size_));
    }
  }

  std::string path_;
  int fd_ = -1;
  uint64_t data_start_ = 0;
  uint64_t data_size_ = 0;
};

}  // namespace

SafetensorsFile read_safetensors(const std::string& path) { return Reader(path).read(); }

}  // namespace halo::io
