// safetensors without LibTorch: dtype table, round trips of every dtype (0-d, empty,
// metadata), the exact on-disk layout, writer argument checks and atomic writes.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "IoTestSupport.h"
#include "io/Safetensors.h"
#include "util/Error.h"

namespace halo::io {
namespace {

using testing::TempDir;

const std::vector<DType> kAllDTypes = {DType::BOOL, DType::U8,  DType::I8,  DType::I16, DType::U16,
                                       DType::I32,  DType::U32, DType::I64, DType::U64, DType::F16,
                                       DType::BF16, DType::F32, DType::F64};

// Deterministic bytes for a tensor (0/1 for BOOL).
std::vector<uint8_t> pattern(DType dtype, size_t nbytes, int seed) {
  std::vector<uint8_t> b(nbytes);
  for (size_t i = 0; i < nbytes; ++i) {
    b[i] = dtype == DType::BOOL ? static_cast<uint8_t>((i + seed) % 2)
                                : static_cast<uint8_t>((i * 37 + seed * 11 + 5) & 0xff);
  }
  return b;
}

size_t numel(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  return n;
}

struct Owned {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  TensorView view() const { return {name, dtype, shape, bytes.data(), bytes.size()}; }
};

Owned make(std::string name, DType dtype, std::vector<int64_t> shape, int seed) {
  size_t nbytes = numel(shape) * dtype_size(dtype);
  return {std::move(name), dtype, shape, pattern(dtype, nbytes, seed)};
}

std::vector<TensorView> views(const std::vector<Owned>& owned) {
  std::vector<TensorView> v;
  for (const auto& o : owned) v.push_back(o.view());
  return v;
}

TEST(SafetensorsDType, NamesSizesAndLookup) {
  const std::vector<std::pair<const char*, size_t>> expected = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"I16", 2},  {"U16", 2}, {"I32", 4}, {"U32", 4},
      {"I64", 8},  {"U64", 8}, {"F16", 2}, {"BF16", 2}, {"F32", 4}, {"F64", 8}};
  ASSERT_EQ(kAllDTypes.size(), expected.size());
  for (size_t i = 0; i < kAllDTypes.size(); ++i) {
    EXPECT_STREQ(dtype_name(kAllDTypes[i]), expected[i].first);
    EXPECT_EQ(dtype_size(kAllDTypes[i]), expected[i].second);
    EXPECT_EQ(dtype_from_name(expected[i].first), kAllDTypes[i]);
  }
  EXPECT_FALSE(dtype_from_name("F8_E4M3").has_value());
  EXPECT_FALSE(dtype_from_name("f32").has_value());
  EXPECT_FALSE(dtype_from_name("").has_value());
}

TEST(Safetensors, RoundTripsEveryDTypeScalarsEmptyTensorsAndMetadata) {
  TempDir dir;
  std::vector<Owned> owned;
  int seed = 0;
  for (DType d : kAllDTypes) owned.push_back(make(std::string("t.") + dtype_name(d), d, {2, 3}, seed++));
  owned.push_back(make("scalar_f64", DType::F64, {}, 7));
  owned.push_back(make("scalar_bool", DType::BOOL, {}, 1));
  owned.push_back(make("empty_rows", DType::F32, {0, 4}, 0));
  owned.push_back(make("empty_cols", DType::I64, {3, 0}, 0));
  owned.push_back(make("rank4", DType::BF16, {2, 1, 3, 2}, 3));
  const std::map<std::string, std::string> meta = {
      {"format", "pt"}, {"halo.arch", "convnext_tiny"}, {"note", "ünïcode \"quoted\"\n"}, {"", ""}};
  std::string path = dir.file("all.safetensors");
  write_safetensors(path, views(owned), meta);

  SafetensorsFile f = read_safetensors(path);
  EXPECT_EQ(f.metadata, meta);
  ASSERT_EQ(f.tensors.size(), owned.size());
  for (const auto& o : owned) {
    SCOPED_TRACE(o.name);
    ASSERT_EQ(f.tensors.count(o.name), 1u);
    const TensorData& t = f.tensors.at(o.name);
    EXPECT_EQ(t.dtype, o.dtype);
    EXPECT_EQ(t.shape, o.shape);
    EXPECT_EQ(t.bytes, o.bytes);
  }
  EXPECT_EQ(f.tensors.at("scalar_f64").bytes.size(), 8u);
  EXPECT_TRUE(f.tensors.at("empty_rows").bytes.empty());
}

TEST(Safetensors, LayoutIsLengthPaddedHeaderThenDataInTheOrderGiven) {
  TempDir dir;
  std::vector<Owned> owned = {make("z_last_name", DType::F32, {3}, 1), make("a_first_name", DType::I16, {5}, 2),
                              make("m_empty", DType::U8, {0}, 0), make("b", DType::F64, {1, 1}, 3)};
  std::string path = dir.file("layout.safetensors");
  write_safetensors(path, views(owned), {});
  std::vector<uint8_t> file = testing::read_bytes(path);

  ASSERT_GE(file.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | file[i];
  EXPECT_EQ(n % 8, 0u);
  std::string header(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  size_t json_end = header.find_last_not_of(' ') + 1;
  EXPECT_EQ(header[json_end - 1], '}');
  EXPECT_LT(header.size() - json_end, 8u) << "padding is fewer than 8 spaces";
  auto j = nlohmann::json::parse(header);
  EXPECT_FALSE(j.contains("__metadata__")) << "empty metadata is omitted";

  std::vector<uint8_t> expected_data;
  uint64_t offset = 0;
  for (const auto& o : owned) {
    SCOPED_TRACE(o.name);
    EXPECT_EQ(j[o.name]["dtype"], dtype_name(o.dtype));
    EXPECT_EQ(j[o.name]["shape"].get<std::vector<int64_t>>(), o.shape);
    EXPECT_EQ(j[o.name]["data_offsets"].get<std::vector<uint64_t>>(),
              (std::vector<uint64_t>{offset, offset + o.bytes.size()}));
    offset += o.bytes.size();
    expected_data.insert(expected_data.end(), o.bytes.begin(), o.bytes.end());
  }
  EXPECT_EQ(std::vector<uint8_t>(file.begin() + 8 + static_cast<std::ptrdiff_t>(n), file.end()), expected_data);
  EXPECT_EQ(read_safetensors(path).metadata.size(), 0u);
}

TEST(Safetensors, NoTensorsIsAValidFile) {
  TempDir dir;
  std::string path = dir.file("none.safetensors");
  write_safetensors(path, {}, {{"k", "v"}});
  SafetensorsFile f = read_safetensors(path);
  EXPECT_TRUE(f.tensors.empty());
  EXPECT_EQ(f.metadata.at("k"), "v");
}

void expect_write_error(const std::string& path, const std::vector<TensorView>& tensors, const std::string& needle) {
  try {
    write_safetensors(path, tensors, {});
    ADD_FAILURE() << "write_safetensors accepted bad input (" << needle << ")";
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Safetensors, WriterRejectsInconsistentInput) {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  std::vector<uint8_t> buf(24);
  expect_write_error(path, {{"w", DType::F32, {2, 3}, buf.data(), 20}}, "needs 24 bytes but 20");
  expect_write_error(path, {{"w", DType::F32, {-1}, buf.data(), 0}}, "negative dimension");
  expect_write_error(path, {{"w", DType::U8, {4}, buf.data(), 4}, {"w", DType::U8, {4}, buf.data(), 4}},
                     "'w' appears twice");
  expect_write_error(path, {{"__metadata__", DType::U8, {1}, buf.data(), 1}}, "reserved");
  expect_write_error(path, {{"bad\xff", DType::U8, {1}, buf.data(), 1}}, "UTF-8");
  expect_write_error(path, {{"null", DType::U8, {2}, nullptr, 2}}, "data is null");
  EXPECT_TRUE(dir.entries().empty()) << "a rejected write creates no file";
}

// Runs `write` with the process file-size limit lowered to `limit` bytes, so the write
// fails half-way with EFBIG (SIGXFSZ ignored meanwhile).
template <typename F>
void with_file_size_limit(rlim_t limit, F&& write) {
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit lowered = old;
  lowered.rlim_cur = limit;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lowered), 0);
  write();
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
}

TEST(SafetensorsAtomicWrite, FailuresLeaveTheExistingFileUntouched) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  Owned small = make("w", DType::F32, {4}, 1);
  write_safetensors(path, {small.view()}, {{"version", "1"}});
  const std::vector<uint8_t> before = testing::read_bytes(path);

  // Into a folder that does not exist: the error names the path.
  std::string missing = dir.file("no/such/folder/model.safetensors");
  try {
    write_safetensors(missing, {small.view()}, {});
    ADD_FAILURE() << "writing into a missing folder succeeded";
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }

  // Invalid input aimed at the existing file.
  std::vector<uint8_t> buf(8);
  EXPECT_THROW(write_safetensors(path, {{"w", DType::F64, {2}, buf.data(), 8}}, {}), util::Error);

  // A write that fails half-way (file size limit hit while writing 1 MiB).
  Owned big = make("big", DType::U8, {1 << 20}, 2);
  with_file_size_limit(64 * 1024, [&] {
    try {
      write_safetensors(path, {big.view()}, {{"version", "2"}});
      ADD_FAILURE() << "a write past the file size limit succeeded";
    } catch (const util::Error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  });

  EXPECT_EQ(testing::read_bytes(path), before);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"}) << "no temporary files left";
  EXPECT_EQ(read_safetensors(path).metadata.at("version"), "1");

  // A successful write then replaces it.
  write_safetensors(path, {big.view()}, {{"version", "2"}});
  EXPECT_EQ(read_safetensors(path).tensors.at("big").bytes, big.bytes);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});
}

}  // namespace
}  // namespace halo::io
