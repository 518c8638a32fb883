// The strict reader on malformed files: each defect is a util::Error naming the file and
// the tensor or field; 2000 random mutations of a valid file never crash the reader.
#include <gtest/gtest.h>

#include <cctype>
#include <random>

#include "IoTestSupport.h"
#include "io/Safetensors.h"
#include "util/Error.h"

namespace halo::io {
namespace {

using testing::TempDir;

// A file with the given header text (padded to 8 unless `pad` is false) and `data_bytes`
// bytes of data.
std::vector<uint8_t> file_bytes(std::string header, size_t data_bytes, bool pad = true) {
  if (pad) header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> b(8);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(n >> (8 * i));
  b.insert(b.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) b.push_back(static_cast<uint8_t>(i));
  return b;
}

class SafetensorsReject : public ::testing::Test {
 protected:
  // Writes `bytes` to a file and expects read_safetensors to throw a util::Error whose
  // message names the file and contains every needle.
  void expect_rejected(const std::vector<uint8_t>& bytes, const std::vector<std::string>& needles) {
    std::string path = dir_.file("case" + std::to_string(count_++) + ".safetensors");
    testing::write_bytes(path, bytes);
    try {
      read_safetensors(path);
      ADD_FAILURE() << "accepted a malformed file; expected: " << needles.front();
    } catch (const util::Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
      for (const auto& n : needles) {
        EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
      }
    }
  }
  void expect_rejected(const std::string& header, size_t data_bytes, const std::vector<std::string>& needles) {
    expect_rejected(file_bytes(header, data_bytes), needles);
  }

  TempDir dir_;
  int count_ = 0;
};

const std::string kGood = R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"I16","shape":[2,2],"data_offsets":[8,16]}})";

TEST_F(SafetensorsReject, TheWellFormedBaseFileIsAccepted) {
  std::string path = dir_.file("good.safetensors");
  testing::write_bytes(path, file_bytes(kGood, 16));
  SafetensorsFile f = read_safetensors(path);
  EXPECT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors.at("b").shape, (std::vector<int64_t>{2, 2}));
  // Unpadded headers (other writers) are accepted too.
  testing::write_bytes(path, file_bytes(R"({"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}})", 3, false));
  EXPECT_EQ(read_safetensors(path).tensors.at("a").bytes, (std::vector<uint8_t>{0, 1, 2}));
}

TEST_F(SafetensorsReject, MissingAndTruncatedFiles) {
  std::string missing = dir_.file("does-not-exist.safetensors");
  try {
    read_safetensors(missing);
    ADD_FAILURE() << "read a missing file";
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos);
  }
  expect_rejected(std::vector<uint8_t>{}, {"0 bytes long"});
  expect_rejected(std::vector<uint8_t>{1, 2, 3}, {"3 bytes long"});
  std::vector<uint8_t> good = file_bytes(kGood, 16);
  expect_rejected(std::vector<uint8_t>(good.begin(), good.end() - 3), {"tensor 'b'", "past the end"});
  expect_rejected(std::vector<uint8_t>(good.begin(), good.begin() + 20), {"beyond the end of the file"});
  std::vector<uint8_t> header_only(good.begin(), good.end() - 16);
  expect_rejected(header_only, {"past the end"});
}

TEST_F(SafetensorsReject, HeaderLengthBeyondTheFile) {
  std::vector<uint8_t> b = file_bytes(kGood, 16);
  b[2] = 0x10;  // n += 1 MiB
  expect_rejected(b, {"header length", "beyond the end of the file"});
  for (int i = 0; i < 8; ++i) b[i] = 0xff;  // 2^64 - 1: must not be allocated
  expect_rejected(b, {"18446744073709551615", "beyond the end"});
}

TEST_F(SafetensorsReject, HeaderThatIsNotAJsonObject) {
  expect_rejected("{not json", 0, {"not valid JSON"});
  expect_rejected(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})", 4, {"not valid JSON"});
  expect_rejected("[1, 2, 3]", 0, {"JSON array, not an object"});
  expect_rejected("\"text\"", 0, {"not an object"});
  expect_rejected(std::string(9, ' '), 0, {"not valid JSON"});
  expect_rejected(R"({"a":)" + std::string(100, '[') + std::string(100, ']') + "}", 0, {"nests deeper"});
  std::vector<uint8_t> nul_padded = file_bytes("{}", 0, false);
  nul_padded[0] = 8;
  nul_padded.insert(nul_padded.end(), 6, 0);
  expect_rejected(nul_padded, {"not valid JSON"});
}

TEST_F(SafetensorsReject, BadTensorEntries) {
  expect_rejected(R"({"w":{"dtype":"F17","shape":[1],"data_offsets":[0,4]}})", 4,
                  {"tensor 'w'", "unknown dtype 'F17'"});
  expect_rejected(R"({"w":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", 4,
                  {"tensor 'w'", "'dtype' is not a string"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 20,
                  {"tensor 'w'", "needs 24 bytes", "[0, 20]"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8, {"tensor 'w'", "shape entry -2"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", 8, {"tensor 'w'", "shape entry 2.0"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":"2","data_offsets":[0,8]}})", 8, {"'shape' is not an array"});
  expect_rejected(R"({"w":{"dtype":"U8","shape":[1099511627776,1099511627776,1099511627776],"data_offsets":[0,8]}})", 8,
                  {"tensor 'w'", "overflows"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2]}})", 8, {"tensor 'w'", "'data_offsets' is missing"});
  expect_rejected(R"({"w":{"dtype":"F32","data_offsets":[0,8]}})", 8, {"'shape' is missing"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1}})", 8, {"unknown field 'extra'"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", 8, {"'data_offsets' [0]"});
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8,
                  {"tensor 'w'", "end before they begin"});
  expect_rejected(R"({"w":[1,2]})", 0, {"tensor 'w'", "not an object"});
}

TEST_F(SafetensorsReject, OffsetsThatOverlapLeaveGapsOrRunPastTheEnd) {
  expect_rejected(R"({"a":{"dtype":"U8","shape":[16],"data_offsets":[0,16]},)"
                  R"("b":{"dtype":"U8","shape":[16],"data_offsets":[8,24]}})",
                  24, {"tensor 'b'", "overlap tensor 'a'"});
  expect_rejected(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})",
                  16, {"overlap"});
  expect_rejected(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"U8","shape":[8],"data_offsets":[16,24]}})",
                  24, {"tensor 'b'", "gap of 8 bytes"});
  expect_rejected(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}})", 12, {"tensor 'a'", "gap of 4 bytes"});
  expect_rejected(R"({"a":{"dtype":"U8","shape":[16],"data_offsets":[0,16]}})", 8, {"tensor 'a'", "past the end"});
  expect_rejected(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})", 16, {"8 bytes after the last tensor"});
  expect_rejected("{}", 5, {"5 bytes after the last tensor"});
}

TEST_F(SafetensorsReject, DuplicateNamesAndBadMetadata) {
  expect_rejected(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                  R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                  2, {"'a' appears twice", "duplicate tensor name"});
  expect_rejected(R"({"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1,
                  {"'dtype' appears twice"});
  expect_rejected(R"({"__metadata__":{"epoch":3}})", 0, {"__metadata__ field 'epoch'", "number", "not a string"});
  expect_rejected(R"({"__metadata__":{"ok":"1","tags":["a"]}})", 0, {"__metadata__ field 'tags'", "array"});
  expect_rejected(R"({"__metadata__":{"x":null}})", 0, {"field 'x' is null"});
  expect_rejected(R"({"__metadata__":["a"]})", 0, {"__metadata__ is array"});
}

// Mutates a valid file 2000 times (fixed seed): bit flips, byte and digit changes,
// truncations, forged header lengths, inserted bytes. The reader must either accept the
// file with consistent sizes or throw util::Error; anything else fails the test.
TEST_F(SafetensorsReject, RandomMutationsNeverCrash) {
  std::string header =
      R"({"__metadata__":{"format":"pt","step":"12"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[24,30]},"e":{"dtype":"I64","shape":[0,5],"data_offsets":[30,30]},)"
      R"("s":{"dtype":"U8","shape":[],"data_offsets":[30,31]},"m":{"dtype":"I8","shape":[1],"data_offsets":[31,32]}})";
  const std::vector<uint8_t> good = file_bytes(header, 32);
  const size_t header_end = good.size() - 32;
  std::mt19937_64 rng(20240611);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::string path = dir_.file("fuzz.safetensors");
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<uint8_t> b = good;
    int kind = static_cast<int>(pick(7));
    for (int k = 0, rounds = 1 + static_cast<int>(pick(3)); k < rounds; ++k) {
      switch (kind) {
        case 0:
          b[pick(header_end)] ^= static_cast<uint8_t>(1u << pick(8));
          break;
        case 1:
          b[pick(b.size())] = static_cast<uint8_t>(rng());
          break;
        case 2:
          b.resize(pick(b.size() + 1));
          break;
        case 3: {
          uint64_t n = pick(2) ? rng() : header_end - 8 + pick(64) - 32;
          for (int i = 0; i < 8 && i < static_cast<int>(b.size()); ++i) b[i] = static_cast<uint8_t>(n >> (8 * i));
          break;
        }
        case 4: {  // change a digit: structurally valid JSON, inconsistent numbers
          size_t at = 8 + pick(header_end - 8);
          while (at < header_end && !std::isdigit(b[at])) ++at;
          if (at < header_end) b[at] = static_cast<uint8_t>('0' + pick(10));
          break;
        }
        case 5:
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(8 + pick(header_end - 8)), static_cast<uint8_t>(rng()));
          break;
        default:
          b.push_back(static_cast<uint8_t>(rng()));
          break;
      }
      if (b.empty()) break;
    }
    testing::write_bytes(path, b);
    try {
      SafetensorsFile f = read_safetensors(path);
      ++accepted;
      for (const auto& [name, t] : f.tensors) {
        size_t n = dtype_size(t.dtype);
        for (auto d : t.shape) n *= static_cast<size_t>(d);
        ASSERT_EQ(t.bytes.size(), n) << "iteration " << iter << ", tensor " << name;
      }
    } catch (const util::Error& e) {
      ++rejected;
      ASSERT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      FAIL() << "iteration " << iter << " (mutation " << kind << "): unexpected exception " << e.what();
    }
  }
  EXPECT_EQ(accepted + rejected, 2000);
  EXPECT_GT(rejected, 1000) << "most mutations must be caught";
  EXPECT_GT(accepted, 10) << "mutations of tensor bytes or metadata text stay readable";
}

}  // namespace
}  // namespace halo::io
