// LibTorch adapters in C++ alone: save/load safetensors for every dtype and odd layouts,
// argument errors, and atomic torch-file writes (the Python checks live elsewhere).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <csignal>
#include <cstring>
#include <filesystem>

#include "IoTestSupport.h"
#include "io/TensorFile.h"
#include "util/Error.h"

namespace halo::io {
namespace {

using testing::TempDir;

::testing::AssertionResult same_bits(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type()) {
    return ::testing::AssertionFailure() << "dtype " << a.scalar_type() << " vs " << b.scalar_type();
  }
  if (a.sizes() != b.sizes()) return ::testing::AssertionFailure() << "shape " << a.sizes() << " vs " << b.sizes();
  at::Tensor ca = a.contiguous(), cb = b.contiguous();
  if (ca.nbytes() > 0 && std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) != 0) {
    return ::testing::AssertionFailure() << "bytes differ";
  }
  return ::testing::AssertionSuccess();
}

at::Tensor sample(at::ScalarType dtype, at::IntArrayRef shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  at::Tensor base = at::arange(n, at::kDouble).mul(0.37).sin().mul(100);
  if (dtype == at::kBool) return (at::arange(n, at::kLong) % 3 == 0).reshape(shape);
  if (!at::isFloatingType(dtype)) base = base.round().to(at::kLong);
  return base.to(dtype).reshape(shape);
}

const std::vector<at::ScalarType> kTorchDTypes = {at::kBool,     at::kByte,   at::kChar,  at::kShort,  at::kUInt16,
                                                  at::kInt,      at::kUInt32, at::kLong,  at::kUInt64, at::kHalf,
                                                  at::kBFloat16, at::kFloat,  at::kDouble};

TEST(TensorFile, SafetensorsRoundTripOfEveryDTypeAndLayout) {
  TempDir dir;
  NamedTensors in;
  for (auto dt : kTorchDTypes) in.emplace_back(std::string("t_") + c10::toString(dt), sample(dt, {3, 4}));
  in.emplace_back("scalar", at::scalar_tensor(2.5, at::kDouble));
  in.emplace_back("empty", at::zeros({0, 3}));
  in.emplace_back("transposed", sample(at::kFloat, {3, 5}).t());
  in.emplace_back("row_view", sample(at::kLong, {4, 6}).select(0, 2));
  in.emplace_back("param", sample(at::kFloat, {2, 2}).requires_grad_());
  std::string path = dir.file("adapters.safetensors");
  save_safetensors(path, in, {{"format", "pt"}, {"step", "42"}});

  std::map<std::string, std::string> meta;
  NamedTensors out = load_safetensors(path, &meta);
  EXPECT_EQ(meta, (std::map<std::string, std::string>{{"format", "pt"}, {"step", "42"}}));
  ASSERT_EQ(out.size(), in.size());
  std::map<std::string, at::Tensor> by_name(in.begin(), in.end());
  for (size_t i = 0; i < out.size(); ++i) {
    const auto& [name, t] = out[i];
    SCOPED_TRACE(name);
    if (i > 0) {
      EXPECT_LT(out[i - 1].first, name) << "sorted by name";
    }
    ASSERT_EQ(by_name.count(name), 1u);
    EXPECT_TRUE(same_bits(t, by_name[name]));
    EXPECT_TRUE(t.device().is_cpu());
    EXPECT_FALSE(t.requires_grad());
  }
}

TEST(TensorFile, LoadedTensorsOwnTheirBytes) {
  TempDir dir;
  std::string path = dir.file("own.safetensors");
  save_safetensors(path, {{"w", at::ones({64, 32})}}, {});
  NamedTensors out = load_safetensors(path);
  std::filesystem::remove(path);
  at::Tensor w = out.at(0).second;
  out.clear();
  w.add_(1);
  EXPECT_EQ(w.sum().item<float>(), 2.0f * 64 * 32);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data_ptr()) % 16, 0u);
}

template <typename F>
void expect_error(F&& f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << needles.front();
  } catch (const util::Error& e) {
    for (const auto& n : needles) {
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  }
}

TEST(TensorFile, UnsupportedInputsAreErrorsNamingFileAndTensor) {
  TempDir dir;
  std::string st = dir.file("x.safetensors"), pt = dir.file("x.pt");
  expect_error(
      [&] {
        save_safetensors(st, {{"c", at::zeros({2}, at::kComplexFloat)}}, {});
      },
      {st, "tensor 'c'", "ComplexFloat"});
  expect_error([&] { save_safetensors(st, {{"u", at::Tensor()}}, {}); }, {st, "tensor 'u'", "undefined"});
  expect_error(
      [&] {
        save_safetensors(st, {{"a", at::zeros({1})}, {"a", at::zeros({1})}}, {});
      },
      {st, "'a' appears twice"});
  expect_error(
      [&] {
        save_safetensors(st, {{"sp", at::zeros({2, 2}).to_sparse()}}, {});
      },
      {st, "tensor 'sp'", "not a dense tensor"});
  expect_error(
      [&] {
        save_torch_state_dict(pt, {{"u16", at::zeros({2}, at::kUInt16)}});
      },
      {pt, "tensor 'u16'", "UInt16", "weights_only"});
  expect_error(
      [&] {
        save_torch_state_dict(pt, {{"a", at::zeros({1})}, {"a", at::ones({1})}});
      },
      {pt, "'a' appears twice"});
  EXPECT_TRUE(dir.entries().empty());
}

TEST(TensorFile, TorchFileReadsBackInLibTorch) {
  TempDir dir;
  std::string path = dir.file("state.pt");
  NamedTensors in = {{"conv.weight", sample(at::kFloat, {4, 3, 3, 3})},
                     {"bn.num_batches_tracked", at::scalar_tensor(7, at::kLong)},
                     {"head.bias", sample(at::kBFloat16, {5})}};
  save_torch_state_dict(path, in);
  auto bytes = testing::read_bytes(path);
  c10::IValue v = torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  ASSERT_TRUE(v.isGenericDict());
  auto dict = v.toGenericDict();
  ASSERT_EQ(dict.size(), in.size());
  size_t i = 0;
  for (const auto& entry : dict) {  // insertion order is kept
    EXPECT_EQ(entry.key().toStringRef(), in[i].first);
    EXPECT_TRUE(same_bits(entry.value().toTensor(), in[i].second)) << in[i].first;
    ++i;
  }
}

TEST(TensorFile, FailedTorchFileWriteLeavesTheExistingFile) {
  TempDir dir;
  std::string path = dir.file("state.pt");
  save_torch_state_dict(path, {{"w", at::ones({4})}});
  const auto before = testing::read_bytes(path);

  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit lowered = old;
  lowered.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lowered), 0);
  expect_error([&] { save_torch_state_dict(path, {{"big", at::ones({1 << 18})}}); }, {path, "File too large"});
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);

  std::string missing = dir.file("missing/state.pt");
  expect_error([&] { save_torch_state_dict(missing, {{"w", at::ones({4})}}); }, {missing, "No such file"});
  EXPECT_EQ(testing::read_bytes(path), before);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"state.pt"});
}

}  // namespace
}  // namespace halo::io
