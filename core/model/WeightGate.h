// ZeRO's weights stage as the model sees it: a block's whole weights exist only while it runs.
// The model wraps each block in gated(); the trainer opens a gate that all-gathers and frees them.
#pragma once

#include <memory>
#include <string>

#include "model/Checkpoint.h"
#include "parallel/ShardedTensor.h"

namespace halo::model {

class WeightGate {
 public:
  virtual ~WeightGate() = default;
  // The whole weights of `unit` (a block's layer-list name, "stages.2.blocks.5") are needed
  // until the matching release(); calls nest (a count per unit). backward: asked by the
  // block's backward (the blocks run last to first from here on), else by its forward.
  virtual void gather(const std::string& unit, bool backward) = 0;
  virtual void release(const std::string& unit) = 0;

  // One gate per process (as one trainer per rank): until closed, gated() asks it. A
  // backward that runs later reaches the gate it was built with.
  static void open(std::shared_ptr<WeightGate> gate);
  static void close(const WeightGate* gate);  // only if it is still the open one
};

// block(x) with the unit's weights gathered around it: in forward before it runs and freed
// after, and again in backward before its backward (and recompute) and freed once its input's
// gradient is made. Without an open gate: block(x), nothing else.
parallel::ShardedTensor gated(const std::string& unit, const Segment& block, const parallel::ShardedTensor& x);

}  // namespace halo::model
