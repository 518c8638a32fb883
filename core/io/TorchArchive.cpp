// Data-only loading of torch::serialize archives: list the zip's records with caffe2's
// reader, refuse TorchScript methods, then let torch::jit load the attributes.
#include "io/TorchArchive.h"

#include <regex>

#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>
#include <torch/serialize/input-archive.h>

#include "util/Error.h"

namespace halo::io {

namespace {

std::string short_what(const std::exception& e) {
  const auto* c10e = dynamic_cast<const c10::Error*>(&e);
  std::string s = c10e ? c10e->what_without_backtrace() : e.what();
  return s.size() > 300 ? s.substr(0, 297) + "..." : s;
}

}  // namespace

void load_torch_archive(const std::string& path, torch::serialize::InputArchive& ar) {
  const std::string hint = "pass a checkpoint written by `halo launch` (<run folder>/checkpoints/step-*.pt)";
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    static const std::regex method(R"((^|\n)\s*def\s)");
    for (const std::string& record : reader.getAllRecords()) {
      const bool code = record.starts_with("code/") || record.find("/code/") != std::string::npos;
      if (!code || !(record.ends_with(".py") || record.ends_with(".pyi"))) continue;
      auto [data, size] = reader.getRecord(record);
      const std::string text(static_cast<const char*>(data.get()), size);
      if (std::regex_search(text, method))
        throw util::Error(
            fmt::format("{} is not a data-only checkpoint: record '{}' defines TorchScript methods, which "
                        "would run while loading",
                        path, record),
            hint + "; never load checkpoints from untrusted sources with torch.jit.load");
    }
  } catch (const util::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw util::Error(fmt::format("{} is not a Halo checkpoint: {}", path, short_what(e)), hint);
  }
  try {
    ar.load_from(path);
  } catch (const std::exception& e) {
    throw util::Error(fmt::format("{} is not a Halo checkpoint: {}", path, short_what(e)), hint);
  }
}

}  // namespace halo::io
