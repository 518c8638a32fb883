// Carries a halo plan and its communicator through autograd's saved data (an IValue
// capsule), so backward sends to the same peers in the same order as forward.
#pragma once

#include <memory>

#include <torch/custom_class.h>

#include "parallel/Communicator.h"
#include "shard/HaloPlan.h"

namespace halo::parallel {

struct PlanCapsule : torch::CustomClassHolder {
  PlanCapsule(shard::HaloPlan p, std::shared_ptr<Communicator> c) : plan(std::move(p)), comm(std::move(c)) {}
  shard::HaloPlan plan;
  std::shared_ptr<Communicator> comm;
};

}  // namespace halo::parallel
