// Every backbone variant Halo builds, over all families (ConvNeXt, ResNet, RegNet): look a name up,
// list the names, get its layer list. Unknown name: nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/LayerList.h"

namespace halo::arch {

enum class Family { ConvNeXt, ResNet, RegNet };

std::optional<Family> backbone_family(const std::string& name);
std::vector<std::string> backbone_name_list();  // the ConvNeXt table's rows, then ResNet's, RegNet's
std::string backbone_names();                   // "convnext_test, convnext_atto, ..., resnet101"
// classes 0: no classification head (a detector's backbone).
std::optional<LayerList> backbone_layers(const std::string& name, int64_t classes = 1000, int64_t in_chans = 3);

}  // namespace halo::arch
