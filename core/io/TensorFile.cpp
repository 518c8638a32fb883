// at::Tensor <-> safetensors, and a torch.load-able zip written with LibTorch's own
// Pickler and PyTorchStreamWriter (the pickle a weights-only unpickler accepts).
#include "io/TensorFile.h"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <memory>
#include <optional>
#include <set>

#include "io/AtomicFile.h"
#include "io/Safetensors.h"
#include "util/Error.h"

namespace halo::io {

namespace {

struct Pair {
  at::ScalarType scalar;
  DType dtype;
};

constexpr Pair kPairs[] = {
    {at::kBool, DType::BOOL},  {at::kByte, DType::U8},  {at::kChar, DType::I8},       {at::kShort, DType::I16},
    {at::kUInt16, DType::U16}, {at::kInt, DType::I32},  {at::kUInt32, DType::U32},    {at::kLong, DType::I64},
    {at::kUInt64, DType::U64}, {at::kHalf, DType::F16}, {at::kBFloat16, DType::BF16}, {at::kFloat, DType::F32},
    {at::kDouble, DType::F64},
};

std::optional<DType> to_dtype(at::ScalarType s) {
  for (const auto& p : kPairs) {
    if (p.scalar == s) return p.dtype;
  }
  return std::nullopt;
}

at::ScalarType to_scalar(DType d) {
  for (const auto& p : kPairs) {
    if (p.dtype == d) return p.scalar;
  }
  throw util::Error(fmt::format("no LibTorch dtype for {}", dtype_name(d)));
}

// A detached, dense, contiguous CPU tensor with conj/neg views resolved.
at::Tensor plain_cpu(const std::string& path, const std::string& name, const at::Tensor& t) {
  if (!t.defined()) {
    throw util::Error(fmt::format("cannot write '{}': tensor '{}' is undefined", path, name));
  }
  if (t.layout() != at::kStrided || t.is_quantized()) {
    throw util::Error(
        fmt::format("cannot write '{}': tensor '{}' is not a dense tensor ({})", path, name, c10::str(t.layout())),
        "convert it with .to_dense() / .dequantize() first");
  }
  return t.detach().to(at::kCPU).resolve_conj().resolve_neg().contiguous();
}

void check_unique(const std::string& path, const NamedTensors& tensors) {
  std::set<std::string_view> names;
  for (const auto& [name, _] : tensors) {
    if (!names.insert(name).second) {
      throw util::Error(fmt::format("cannot write '{}': tensor '{}' appears twice", path, name),
                        "give every tensor a unique name");
    }
  }
}

bool torch_loadable(at::ScalarType s) {
  switch (s) {
    case at::kBool:
    case at::kByte:
    case at::kChar:
    case at::kShort:
    case at::kInt:
    case at::kLong:
    case at::kHalf:
    case at::kBFloat16:
    case at::kFloat:
    case at::kDouble:
    case at::kComplexFloat:
    case at::kComplexDouble:
      return true;
    default:
      return false;
  }
}

}  // namespace

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata) {
  check_unique(path, tensors);
  std::vector<at::Tensor> keep;
  std::vector<TensorView> views;
  keep.reserve(tensors.size());
  views.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    at::Tensor c = plain_cpu(path, name, t);
    auto dtype = to_dtype(c.scalar_type());
    if (!dtype) {
      throw util::Error(fmt::format("cannot write '{}': tensor '{}' has dtype {}, which "
                                    "safetensors files from Halo do not hold",
                                    path, name, c10::toString(c.scalar_type())),
                        "convert it to a real dtype (bool, int, float, half, bfloat16) first");
    }
    keep.push_back(c);
    views.push_back(TensorView{name, *dtype, c.sizes().vec(), c.data_ptr(), c.nbytes()});
  }
  write_safetensors(path, views, metadata);
}

NamedTensors load_safetensors(const std::string& path, std::map<std::string, std::string>* metadata) {
  SafetensorsFile file = read_safetensors(path);
  if (metadata) *metadata = std::move(file.metadata);
  NamedTensors out;
  out.reserve(file.tensors.size());
  for (auto& [name, td] : file.tensors) {
    auto options = at::TensorOptions().dtype(to_scalar(td.dtype));
    if (td.bytes.empty()) {
      out.emplace_back(name, at::empty(td.shape, options));
      continue;
    }
    // The tensor adopts the bytes read from the file (operator new aligns them to 16
    // bytes, enough for every dtype here).
    auto owner = std::make_shared<std::vector<uint8_t>>(std::move(td.bytes));
    void* data = owner->data();
    out.emplace_back(name, at::from_blob(
                               data, td.shape, [owner](void*) mutable { owner.reset(); }, options));
  }
  return out;
}

void save_torch_state_dict(const std::string& path, const NamedTensors& tensors) {
  check_unique(path, tensors);
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, t] : tensors) {
    at::Tensor c = plain_cpu(path, name, t);
    if (!torch_loadable(c.scalar_type())) {
      throw util::Error(fmt::format("cannot write '{}': tensor '{}' has dtype {}, which torch.load("
                                    "weights_only=True) cannot read from a LibTorch-written file",
                                    path, name, c10::toString(c.scalar_type())),
                        "convert it (e.g. to int32/int64) or export it as safetensors");
    }
    // Each storage is written whole: copy views of larger storages to their own.
    if (c.storage_offset() != 0 || c.storage().nbytes() != c.nbytes()) c = c.clone();
    dict.insert(name, c);
  }

  // tag_aggregates=false: no torch.jit._pickle.restore_type_tag global, which a
  // weights-only load rejects. Tensors become torch._utils._rebuild_tensor_v2 calls on
  // ('storage', torch.<T>Storage, key, 'cpu', numel) persistent ids, all allowed.
  std::vector<char> pickle;
  torch::jit::Pickler pickler([&](const char* data, size_t n) { pickle.insert(pickle.end(), data, data + n); },
                              /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
                              /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(c10::IValue(dict));
  pickler.stop();

  AtomicFile file(path);
  // The zip writer must never see a failing sink (it would throw from its destructor):
  // the first write error is kept, later bytes are dropped, and it is thrown afterwards.
  std::optional<util::Error> write_error;
  auto sink = [&](const void* data, size_t n) -> size_t {
    if (!write_error) {
      try {
        file.write(data, n);
      } catch (const util::Error& e) {
        write_error = e;
      }
    }
    return n;
  };
  try {
    caffe2::serialize::PyTorchStreamWriter zip(sink);
    size_t i = 0;
    for (const at::Tensor& t : pickler.tensorData()) {
      zip.writeRecord(fmt::format("data/{}", i++), t.storage().data(), t.storage().nbytes());
    }
    zip.writeRecord("data.pkl", pickle.data(), pickle.size());
    zip.writeEndOfFile();
  } catch (const c10::Error& e) {
    throw util::Error(fmt::format("cannot write '{}': the zip writer failed: {}", path, e.what_without_backtrace()));
  }
  if (write_error) throw *write_error;
  file.commit();
}

}  // namespace halo::io
