// Whole-model figures read off the layers: parameter counts, the largest tensor, the
// windows the shardability check walks.
#include "arch/LayerList.h"

#include <algorithm>
#include <map>

#include "util/Error.h"

namespace halo::arch {

int LayerList::stage_count() const {
  int n = 0;
  for (const Layer& l : layers_)
    if (l.kind != LayerKind::NormMlpHead && l.kind != LayerKind::PoolFcHead) n = std::max(n, l.stage + 1);
  return n;
}

int64_t LayerList::parameter_count() const {
  int64_t n = 0;
  for (const Layer& l : layers_) n += l.parameter_count();
  return n;
}

std::vector<Parameter> LayerList::parameters() const {
  std::vector<Parameter> out;
  for (const Layer& l : layers_) out.insert(out.end(), l.parameters.begin(), l.parameters.end());
  return out;
}

std::vector<std::string> LayerList::block_of(const std::vector<std::string>& names, const std::string& prefix) const {
  std::vector<std::string> out;
  for (const int i : layer_of(names, prefix))
    out.push_back(i >= 0 && layers_[static_cast<size_t>(i)].block >= 0 ? layers_[static_cast<size_t>(i)].name : "");
  return out;
}

std::vector<int> LayerList::layer_of(const std::vector<std::string>& names, const std::string& prefix) const {
  std::map<std::string, int> index;
  for (size_t i = 0; i < layers_.size(); ++i)
    for (const Parameter& p : layers_[i].parameters) index[prefix + p.name] = static_cast<int>(i);
  std::vector<int> out;
  for (const std::string& n : names) {
    const auto it = index.find(n);
    out.push_back(it == index.end() ? -1 : it->second);
  }
  return out;
}

Parameter LayerList::largest_parameter() const {
  const std::vector<Parameter> all = parameters();
  if (all.empty()) throw util::Error("the layer list has no parameters");
  return *std::max_element(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.numel() < b.numel(); });
}

std::vector<shard::LayerWindow> LayerList::windows() const {
  std::vector<shard::LayerWindow> out;
  for (const Layer& l : layers_)
    for (const PathOp& op : l.path) out.push_back({op.name, op.spec.along_w()});
  return out;
}

}  // namespace halo::arch
