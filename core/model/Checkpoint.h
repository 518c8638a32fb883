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

// True while a checkpointed segment whose output's values nothing reads (one ConvNeXt block:
// backward needs only its graph) reruns inside backward: the block may skip the ops that only
// the output needs (fc2 and GELU), exactly, as its saved tensors are the same.
bool recompute_output_unread();

// y = segment(x), saving only x for backward. output_unread: the segment's last op is one
// that honours recompute_output_unread() (a ConvNeXt block).
parallel::ShardedTensor checkpointed(const Segment& segment, const parallel::ShardedTensor& x,
                                     bool output_unread = false);

// y = x + branch(x), checkpointing the branch on x cast to the autocast dtype: what backward
// keeps is that cast (half an fp32 stream's bytes under bf16/fp16; x itself without autocast),
// and the sum keeps nothing. Exact when the branch reads x only through that cast (its first
// op is an autocast conv, as a ConvNeXt block's conv_dw): the same ops on the same values.
parallel::ShardedTensor checkpointed_residual(const Segment& branch, const parallel::ShardedTensor& x,
                                              bool output_unread = false);

}  // namespace halo::model
