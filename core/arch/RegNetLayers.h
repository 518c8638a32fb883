// The RegNetY layer list of a variant, built from its row in the variant table: stem, the
// SE bottleneck blocks of four stages and the head, with timm's module and parameter names.
#pragma once

#include <cstdint>

#include "arch/LayerList.h"
#include "arch/RegNetVariant.h"

namespace halo::arch {

// classes 0: no head (a backbone for a detector).
LayerList regnet_layers(const RegNetVariant& v, int64_t classes = 1000, int64_t in_chans = 3);

}  // namespace halo::arch
