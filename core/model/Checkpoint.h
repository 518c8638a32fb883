// Activation checkpointing for sharded segments: forward runs without keeping activations;
// backward restores the RNG state, recomputes (halo exchanges included, same order) and
// back-propagates through the recomputation. Parameter gradients accumulate as usual.
#pragma once

#include <functional>

#include "parallel/ShardedTensor.h"

namespace halo::model {

enum class CheckpointLevel { None, Block, Stage };
const char* to_string(CheckpointLevel l);

using Segment = std::function<parallel::ShardedTensor(const parallel::ShardedTensor&)>;

// True while a checkpointed segment reruns inside backward: state updates of the forward
// (BatchNorm's running statistics) must not happen twice.
bool recomputing();

// y = segment(x), saving only x for backward.
parallel::ShardedTensor checkpointed(const Segment& segment, const parallel::ShardedTensor& x);

}  // namespace halo::model
