// Moving halo columns between ranks as a HaloPlan says: gather (forward: build the
// extended input) and scatter-add (backward: return halo gradients to their owners).
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "parallel/Communicator.h"
#include "shard/HaloPlan.h"

namespace halo::parallel {

// The layout extended inputs and halo gradients are built in: channels-last for 4-D maps
// (the CPU and CUDA depthwise and dense conv kernels are fastest on it), else contiguous.
at::MemoryFormat halo_memory_format(const at::Tensor& t);

// Forward: posts the receives of the pieces peers own and the sends of the columns peers
// need; finish() waits and returns the extended input (B, C, H, needed), padding filled.
class HaloGather {
 public:
  HaloGather(Communicator& comm, const shard::HaloPlan& plan, const at::Tensor& x);
  at::Tensor finish(double fill);

 private:
  const shard::HaloPlan& plan_;
  at::Tensor x_;
  std::vector<at::Tensor> received_;  // one per Peer piece, in piece order
  Pending pending_;
};

// Backward: sends the gradient of every peer piece back to its owner and receives the
// gradients of the columns this rank lent; finish() returns the gradient of x.
class HaloScatter {
 public:
  HaloScatter(Communicator& comm, const shard::HaloPlan& plan, const at::Tensor& grad_ext);
  at::Tensor finish();

 private:
  const shard::HaloPlan& plan_;
  at::Tensor grad_ext_;
  std::vector<at::Tensor> returned_;  // one per send transfer, in order
  Pending pending_;
};

// Differentiable extension of x by its halos (used by pooling and any op built on it).
at::Tensor halo_extend(const at::Tensor& x, const shard::HaloPlan& plan, std::shared_ptr<Communicator> comm,
                       double fill);

}  // namespace halo::parallel
