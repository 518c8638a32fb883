// Precompiled header: LibTorch's heavy headers, parsed once per build.
// Only .cpp files get it (through CMake); headers include what they use.
#pragma once
#include <torch/torch.h>
