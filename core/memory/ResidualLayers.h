// What the ResNet and RegNetY layers (stems, residual blocks, the pooled head) keep and make
// on one rank, op by op as model::ResNet and model::RegNet run them (channels-last, CPU).
#pragma once

#include <vector>

#include "arch/LayerList.h"
#include "memory/ActivationModel.h"

namespace halo::memory {

// Every layer of a ResNet or RegNet layer list in forward order (util::Error when the width
// cannot shard over in.sp).
std::vector<LayerMemory> residual_layers(const arch::LayerList& layers, const ActivationInput& in);

}  // namespace halo::memory
