// The ConvNeXt layer list of a variant, built from its row in the variant table: stem,
// per stage (downsample,) blocks, and the head, with timm's module and parameter names.
#pragma once

#include <cstdint>
#include <vector>

#include "arch/ConvNeXtVariant.h"
#include "arch/LayerList.h"

namespace halo::arch {

// classes 0: no head (a backbone for a detector), as model::ConvNeXt builds it.
LayerList convnext_layers(const ConvNeXtVariant& v, int64_t classes = 1000, int64_t in_chans = 3);

// One block "stages.<stage>.blocks.<block>" of width dim.
Layer convnext_block(int stage, int block, int64_t dim, bool conv_mlp, double norm_eps);

// Stage `stage`: its downsample from in_dim (stages after the first), then depth blocks.
std::vector<Layer> convnext_stage(int stage, int64_t in_dim, int64_t dim, int depth, bool conv_mlp, double norm_eps);

}  // namespace halo::arch
