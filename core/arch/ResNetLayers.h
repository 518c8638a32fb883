// The ResNet layer list of a variant, built from its row in the variant table: stem, the
// blocks of four stages and the head, with timm's module and parameter names.
#pragma once

#include <cstdint>

#include "arch/LayerList.h"
#include "arch/ResNetVariant.h"

namespace halo::arch {

// classes 0: no head (a backbone for a detector). The stem is the layer "stem" although timm
// keeps conv1, bn1 and maxpool at the top level: its parameters carry timm's names.
LayerList resnet_layers(const ResNetVariant& v, int64_t classes = 1000, int64_t in_chans = 3);

}  // namespace halo::arch
