// `halo plan --calibrate`: this machine's CPU rates measured with LibTorch (a matmul and a
// large copy), for the planner's step-time estimate (which itself needs no LibTorch).
#pragma once

#include "memory/StepTime.h"

namespace halo::launch {

// Times a matmul and a large copy on this machine's CPU with `threads` threads (~1 s).
memory::MachineRates measure_cpu_rates(int threads);

}  // namespace halo::launch
