// model.pretrained: the match is a pure function over names and shapes; reading goes through
// io's safetensors reader or LibTorch's data-only unpickler, copying under NoGradGuard.
#include "train/Pretrained.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include "io/TensorFile.h"
#include "util/Error.h"

namespace halo::train {

namespace {

bool starts_with_any(const std::string& name, const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return name.starts_with(p); });
}

std::string shape_text(const std::vector<int64_t>& s) { return fmt::format("({})", fmt::join(s, ", ")); }

// timm's classifier Linear: ConvNeXt's head.fc, ResNet's fc; and the modules holding it.
const std::vector<std::string> kClassifier{"head.fc.", "fc."};
const std::vector<std::string> kClassifierModule{"head.", "fc."};

// timm's classifier: a different class count keeps the model's own initialisation.
bool is_classifier_with_other_classes(const TensorSlot& m, const TensorSlot& f) {
  if (!starts_with_any(m.name, kClassifier) || m.shape.size() != f.shape.size() || m.shape.empty()) return false;
  return std::equal(m.shape.begin() + 1, m.shape.end(), f.shape.begin() + 1);
}

// At most `most` lines of a list, then how many more.
void list_into(std::string& out, const std::string& title, const std::vector<std::string>& lines, size_t most = 12) {
  if (lines.empty()) return;
  out += fmt::format("\n  {} ({}):", title, lines.size());
  for (size_t i = 0; i < lines.size() && i < most; ++i) out += "\n    " + lines[i];
  if (lines.size() > most) out += fmt::format("\n    ... and {} more", lines.size() - most);
}

}  // namespace

PretrainedMatch match_pretrained(const std::vector<TensorSlot>& model, const std::vector<TensorSlot>& file,
                                 const std::vector<std::string>& skip, const std::string& backbone_prefix,
                                 const std::string& file_path) {
  std::map<std::string, const TensorSlot*> by_name;
  for (const TensorSlot& m : model) by_name[m.name] = &m;
  PretrainedMatch out;
  std::set<std::string> filled;
  bool backbone_file = false;  // some file name took backbone_prefix
  std::vector<std::string> unexpected, wrong_shape, wrong_dtype, missing;
  for (const TensorSlot& f : file) {
    if (starts_with_any(f.name, skip)) {
      out.skipped.push_back(f.name);
      continue;
    }
    auto it = by_name.find(f.name);
    if (it == by_name.end() && !backbone_prefix.empty()) {
      it = by_name.find(backbone_prefix + f.name);
      backbone_file = backbone_file || it != by_name.end();
    }
    if (it == by_name.end()) {
      if (!backbone_prefix.empty() && starts_with_any(f.name, kClassifierModule))
        out.skipped.push_back(f.name);  // timm's classifier: this model holds the backbone only
      else
        unexpected.push_back(fmt::format("{} {}", f.name, shape_text(f.shape)));
      continue;
    }
    const TensorSlot& m = *it->second;
    if (filled.count(m.name)) {
      unexpected.push_back(fmt::format("{} (fills {} a second time)", f.name, m.name));
      continue;
    }
    filled.insert(m.name);
    if (m.floating != f.floating) {
      wrong_dtype.push_back(fmt::format("{}: {} in the file, {} in the model", f.name, f.dtype, m.dtype));
    } else if (m.shape == f.shape) {
      out.load.emplace_back(m.name, f.name);
    } else if (is_classifier_with_other_classes(m, f)) {
      out.reinitialised.push_back(m.name);
    } else {
      wrong_shape.push_back(
          fmt::format("{}: {} in the file, {} in the model", f.name, shape_text(f.shape), shape_text(m.shape)));
    }
  }
  for (const TensorSlot& m : model) {
    if (filled.count(m.name)) continue;
    const std::string timm_name = !backbone_prefix.empty() && m.name.starts_with(backbone_prefix)
                                      ? m.name.substr(backbone_prefix.size())
                                      : m.name;
    if (starts_with_any(m.name, skip) || starts_with_any(timm_name, skip)) continue;  // stays as initialised
    if (backbone_file && !m.name.starts_with(backbone_prefix)) {
      out.kept.push_back(m.name);
      continue;
    }
    missing.push_back(fmt::format("{} {}", m.name, shape_text(m.shape)));
  }
  if (unexpected.empty() && wrong_shape.empty() && wrong_dtype.empty() && missing.empty()) return out;
  std::string problem = fmt::format("model.pretrained {} does not fit the model", file_path);
  list_into(problem, "missing from the file", missing);
  list_into(problem, "in the file but not in the model", unexpected);
  list_into(problem, "wrong shape", wrong_shape);
  list_into(problem, "wrong dtype", wrong_dtype);
  throw util::Error(problem,
                    "check model.arch against the architecture the file was saved from (timm's names, e.g. "
                    "timm.create_model(\"convnext_atto\")); list key prefixes to leave as initialised in "
                    "model.pretrained_skip, e.g. [\"head.\"]");
}

std::vector<std::pair<std::string, at::Tensor>> read_weight_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw util::Error(fmt::format("model.pretrained {} is not a file", path),
                      "give the path of a safetensors or torch.save file of timm-named weights");
  char head[4] = {0};
  std::ifstream(path, std::ios::binary).read(head, sizeof head);
  if (std::memcmp(head, "PK\x03\x04", 4) != 0) return io::load_safetensors(path);  // util::Error when malformed
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string convert = fmt::format(
      "convert it once to safetensors: python -c \"import torch; from safetensors.torch import save_file; "
      "save_file({{k: v.contiguous() for k, v in torch.load('{0}', weights_only=True).items()}}, "
      "'{0}.safetensors')\"",
      path);
  c10::IValue v;
  try {
    v = torch::pickle_load(bytes);
  } catch (const c10::Error& e) {
    const std::string why = e.what_without_backtrace();
    if (why.find("GenericDict but got None") != std::string::npos)  // collections.OrderedDict
      throw util::Error(fmt::format("model.pretrained {} holds an OrderedDict (torch.save(model.state_dict())), "
                                    "which LibTorch's data-only reader cannot read",
                                    path),
                        convert + "; or save dict(model.state_dict())");
    throw util::Error(fmt::format("model.pretrained {} is a zip file but not a torch.save file of tensors: {}", path,
                                  why.substr(0, why.find('\n'))),
                      convert);
  }
  if (!v.isGenericDict())
    throw util::Error(fmt::format("model.pretrained {} holds a {}, not a dict of tensors", path, v.tagKind()),
                      "save model.state_dict(), not the model or a training checkpoint");
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& kv : v.toGenericDict()) {
    if (!kv.key().isString() || !kv.value().isTensor())
      throw util::Error(fmt::format("model.pretrained {}: an entry is not a name and a tensor", path),
                        "save model.state_dict(), not a training checkpoint with other entries");
    out.emplace_back(kv.key().toStringRef(), kv.value().toTensor());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::string backbone_prefix(const torch::nn::Module& root, const torch::nn::Module& backbone) {
  if (&root == &backbone) return "";
  for (const auto& item : root.named_modules("", /*include_self=*/false))
    if (item.value().get() == &backbone) return item.key() + ".";
  return "";
}

PretrainedResult load_pretrained(torch::nn::Module& model, const std::string& path,
                                 const std::vector<std::string>& skip, const std::string& backbone_prefix,
                                 bool check_only) {
  const auto file = read_weight_file(path);
  std::map<std::string, at::Tensor> targets;
  std::vector<TensorSlot> model_slots, file_slots;
  auto slot = [](const std::string& name, const at::Tensor& t) {
    return TensorSlot{name, t.sizes().vec(), std::string(c10::toString(t.scalar_type())), t.is_floating_point()};
  };
  for (const auto& p : model.named_parameters())
    model_slots.push_back(slot(p.key(), p.value())), targets[p.key()] = p.value();
  for (const auto& b : model.named_buffers())
    model_slots.push_back(slot(b.key(), b.value())), targets[b.key()] = b.value();
  std::map<std::string, at::Tensor> sources;
  for (const auto& [name, t] : file) file_slots.push_back(slot(name, t)), sources[name] = t;
  PretrainedResult r{0, match_pretrained(model_slots, file_slots, skip, backbone_prefix, path)};
  if (check_only) return r;
  torch::NoGradGuard no_grad;
  for (const auto& [model_name, file_name] : r.match.load) {
    at::Tensor& target = targets.at(model_name);
    target.copy_(sources.at(file_name).to(target.scalar_type()));
    ++r.loaded;
  }
  return r;
}

}  // namespace halo::train
