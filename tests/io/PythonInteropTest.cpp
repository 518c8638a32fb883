// Halo's files against the reference Python libraries in the .venv: safetensors both ways
// and torch.load(weights_only=True) on save_torch_state_dict's output, compared bitwise.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "IoTestSupport.h"
#include "io/Safetensors.h"
#include "io/TensorFile.h"

namespace halo::io {
namespace {

using testing::TempDir;

// Python side: dumps {name: {dtype, shape, hex}} of a dict of tensors as JSON.
const char* kDumpPy = R"(
import json, sys, torch
def dump(tensors):
    return {k: {"dtype": str(v.dtype), "shape": list(v.shape),
                "hex": v.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes().hex()}
            for k, v in tensors.items()}
)";

std::string hex(const void* data, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

std::string torch_name(at::ScalarType s) {
  static const std::map<at::ScalarType, std::string> names = {
      {at::kBool, "torch.bool"},     {at::kByte, "torch.uint8"},        {at::kChar, "torch.int8"},
      {at::kShort, "torch.int16"},   {at::kUInt16, "torch.uint16"},     {at::kInt, "torch.int32"},
      {at::kUInt32, "torch.uint32"}, {at::kLong, "torch.int64"},        {at::kUInt64, "torch.uint64"},
      {at::kHalf, "torch.float16"},  {at::kBFloat16, "torch.bfloat16"}, {at::kFloat, "torch.float32"},
      {at::kDouble, "torch.float64"}};
  return names.at(s);
}

// Expects Python's dump of each tensor to match `t` in dtype, shape and every byte.
void expect_matches(const nlohmann::json& dumped, const std::string& name, const at::Tensor& t) {
  SCOPED_TRACE(name);
  ASSERT_TRUE(dumped.contains(name)) << dumped.dump();
  const auto& d = dumped[name];
  at::Tensor c = t.detach().contiguous();
  EXPECT_EQ(d["dtype"], torch_name(c.scalar_type()));
  EXPECT_EQ(d["shape"].get<std::vector<int64_t>>(), c.sizes().vec());
  EXPECT_EQ(d["hex"], hex(c.data_ptr(), c.nbytes()));
}

at::Tensor reference_sample(at::ScalarType dtype, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  if (dtype == at::kBool) return (at::arange(n, at::kLong) % 3 == 1).reshape(shape);
  at::Tensor base = at::arange(n, at::kDouble).mul(1.37).cos().mul(50);
  if (!at::isFloatingType(dtype)) base = base.round().to(at::kLong);
  return base.to(dtype).reshape(shape);
}

nlohmann::json run(const TempDir& dir, const std::string& name, const std::string& body, const std::string& file) {
  std::string out = dir.file(name + ".json");
  auto r = testing::run_python(dir, name + ".py", std::string(kDumpPy) + body, {file, out});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return nullptr;
  return nlohmann::json::parse(testing::read_text(out));
}

TEST(PythonInterop, SafetensorsLoadFileReadsHalosFile) {
  TempDir dir;
  NamedTensors in;
  for (auto dt : {at::kBool, at::kByte, at::kChar, at::kShort, at::kUInt16, at::kInt, at::kUInt32, at::kLong,
                  at::kUInt64, at::kHalf, at::kBFloat16, at::kFloat, at::kDouble}) {
    in.emplace_back(std::string("stage.0.") + c10::toString(dt), reference_sample(dt, {2, 3, 2}));
  }
  in.emplace_back("scalar", at::scalar_tensor(-3.25, at::kFloat));
  in.emplace_back("empty", at::zeros({0, 7}, at::kBFloat16));
  in.emplace_back("transposed", reference_sample(at::kFloat, {4, 3}).t());
  const std::map<std::string, std::string> meta = {
      {"format", "pt"}, {"halo.arch", "convnext_atto"}, {"note", "ünïcode \"quoted\""}};
  std::string path = dir.file("halo.safetensors");
  save_safetensors(path, in, meta);

  nlohmann::json r = run(dir, "load", R"(
from safetensors import safe_open
from safetensors.torch import load_file
tensors = load_file(sys.argv[1])
with safe_open(sys.argv[1], framework="pt") as f:
    meta = f.metadata()
json.dump({"metadata": meta, "tensors": dump(tensors)}, open(sys.argv[2], "w"))
)",
                         path);
  ASSERT_FALSE(r.is_null());
  using StringMap = std::map<std::string, std::string>;
  EXPECT_EQ(r["metadata"].get<StringMap>(), meta);
  ASSERT_EQ(r["tensors"].size(), in.size());
  for (const auto& [name, t] : in) expect_matches(r["tensors"], name, t);
}

TEST(PythonInterop, HaloReadsPythonsSaveFile) {
  TempDir dir;
  std::string path = dir.file("python.safetensors");
  nlohmann::json r = run(dir, "save", R"(
from safetensors.torch import save_file
g = torch.Generator().manual_seed(0)
t = {
    "conv.weight": torch.randn(4, 3, 3, 3, generator=g),
    "norm.f64": torch.randn(5, dtype=torch.float64, generator=g),
    "head.bf16": torch.randn(2, 7, generator=g).to(torch.bfloat16),
    "head.f16": torch.randn(3, generator=g).to(torch.float16),
    "i64": torch.arange(-5, 5), "i32": torch.arange(6, dtype=torch.int32).reshape(2, 3),
    "i16": torch.tensor([-7, 300], dtype=torch.int16), "i8": torch.tensor([-1, 2], dtype=torch.int8),
    "u8": torch.tensor([0, 255], dtype=torch.uint8), "u16": torch.tensor([1, 65535], dtype=torch.uint16),
    "mask": torch.rand(9, generator=g) > 0.5, "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3),
}
save_file(t, sys.argv[1], metadata={"format": "pt", "source": "python"})
json.dump({"tensors": dump(t)}, open(sys.argv[2], "w"))
)",
                         path);
  ASSERT_FALSE(r.is_null());

  SafetensorsFile f = read_safetensors(path);
  const std::map<std::string, std::string> python_meta = {{"format", "pt"}, {"source", "python"}};
  EXPECT_EQ(f.metadata, python_meta);
  ASSERT_EQ(f.tensors.size(), r["tensors"].size());
  for (const auto& [name, d] : r["tensors"].items()) {
    SCOPED_TRACE(name);
    ASSERT_EQ(f.tensors.count(name), 1u);
    const TensorData& t = f.tensors.at(name);
    EXPECT_EQ(t.shape, d["shape"].get<std::vector<int64_t>>());
    EXPECT_EQ(hex(t.bytes.data(), t.bytes.size()), d["hex"]);
  }
  EXPECT_EQ(f.tensors.at("head.bf16").dtype, DType::BF16);
  EXPECT_EQ(f.tensors.at("mask").dtype, DType::BOOL);
  EXPECT_EQ(f.tensors.at("u16").dtype, DType::U16);

  NamedTensors loaded = load_safetensors(path);
  ASSERT_EQ(loaded.size(), f.tensors.size());
  for (const auto& [name, t] : loaded) expect_matches(r["tensors"], name, t);
}

TEST(PythonInterop, TorchLoadWeightsOnlyReadsTheStateDict) {
  TempDir dir;
  at::Tensor shared = reference_sample(at::kFloat, {3, 3});
  NamedTensors in = {
      {"stem.0.weight", reference_sample(at::kFloat, {8, 3, 4, 4})},
      {"stem.0.bias", reference_sample(at::kDouble, {8})},
      {"stages.0.blocks.0.gamma", reference_sample(at::kBFloat16, {8})},
      {"bn.num_batches_tracked", at::scalar_tensor(123456789012, at::kLong)},
      {"i64", reference_sample(at::kLong, {2, 5})},
      {"f16", reference_sample(at::kHalf, {3})},
      {"i32", reference_sample(at::kInt, {4})},
      {"i16", reference_sample(at::kShort, {4})},
      {"i8", reference_sample(at::kChar, {4})},
      {"u8", reference_sample(at::kByte, {4})},
      {"mask", reference_sample(at::kBool, {5})},
      {"empty", at::zeros({0, 4})},
      {"transposed", reference_sample(at::kFloat, {2, 5}).t()},
      {"row_view", reference_sample(at::kDouble, {4, 3}).select(0, 1)},
      {"tied.a", shared},
      {"tied.b", shared},
      {"param", reference_sample(at::kFloat, {2}).requires_grad_()},
  };
  std::string path = dir.file("state_dict.pt");
  save_torch_state_dict(path, in);

  nlohmann::json r = run(dir, "torch_load", R"(
path = sys.argv[1]
d = torch.load(path, weights_only=True)
m = torch.load(path, weights_only=True, mmap=True)
json.dump({"type": type(d).__name__, "keys": list(d.keys()),
           "unsafe_globals": torch.serialization.get_unsafe_globals_in_checkpoint(path),
           "mmap_equal": all(torch.equal(d[k], m[k]) for k in d),
           "requires_grad": any(v.requires_grad for v in d.values()),
           "tensors": dump(d)}, open(sys.argv[2], "w"))
)",
                         path);
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(r["type"], "dict");
  EXPECT_EQ(r["unsafe_globals"], nlohmann::json::array()) << "needs no add_safe_globals";
  EXPECT_TRUE(r["mmap_equal"].get<bool>());
  EXPECT_FALSE(r["requires_grad"].get<bool>());
  std::vector<std::string> keys;
  for (const auto& [name, _] : in) keys.push_back(name);
  EXPECT_EQ(r["keys"].get<std::vector<std::string>>(), keys) << "order given is kept";
  for (const auto& [name, t] : in) expect_matches(r["tensors"], name, t);
}

}  // namespace
}  // namespace halo::io
