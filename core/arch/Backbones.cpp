// The families' tables read as one: a new family adds its table here and nowhere else that
// looks variants up by name.
#include "arch/Backbones.h"

#include "arch/ConvNeXtLayers.h"
#include "arch/ConvNeXtVariant.h"
#include "arch/RegNetLayers.h"
#include "arch/RegNetVariant.h"
#include "arch/ResNetLayers.h"
#include "arch/ResNetVariant.h"

namespace halo::arch {

std::optional<Family> backbone_family(const std::string& name) {
  if (find_convnext_variant(name)) return Family::ConvNeXt;
  if (find_resnet_variant(name)) return Family::ResNet;
  if (find_regnet_variant(name)) return Family::RegNet;
  return std::nullopt;
}

std::vector<std::string> backbone_name_list() {
  std::vector<std::string> out;
  for (const auto& v : convnext_variants()) out.push_back(v.name);
  for (const auto& v : resnet_variants()) out.push_back(v.name);
  for (const auto& v : regnet_variants()) out.push_back(v.name);
  return out;
}

std::string backbone_names() {
  std::string out;
  for (const std::string& n : backbone_name_list()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::optional<LayerList> backbone_layers(const std::string& name, int64_t classes, int64_t in_chans) {
  if (auto v = find_convnext_variant(name)) return convnext_layers(*v, classes, in_chans);
  if (auto v = find_resnet_variant(name)) return resnet_layers(*v, classes, in_chans);
  if (auto v = find_regnet_variant(name)) return regnet_layers(*v, classes, in_chans);
  return std::nullopt;
}

}  // namespace halo::arch
