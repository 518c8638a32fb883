// Walks one training step over the per-layer memory model: forward (with or without grad
// per checkpointed segment), backward with recompute, and records the live-bytes peak.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/Enums.h"
#include "memory/ActivationModel.h"

namespace halo::memory {

// Layers [first, last] run as one checkpointed segment (only its input is kept).
struct Segment {
  size_t first = 0, last = 0;
};

struct StepPeak {
  int64_t peak = 0;               // live bytes above the step's start, at the worst moment
  int64_t saved_at_backward = 0;  // saved activations (and inputs) when backward begins
  int64_t forward_peak = 0;
  int64_t grads_at_peak = 0;  // of `peak`: the parameter gradients backward had made by then
  std::string where;          // "backward of stages.0.blocks.2 (recompute)"
};

// One operation of the simulated step, in order: its name ("forward of stem", "backward of
// stages.0.blocks.2 (recompute)"), the live bytes at its high point and once it is done.
struct TracePoint {
  std::string where;
  int64_t high = 0, after = 0;  // above the step's start
};

// The gradient sync inside backward: once the last gradient of a bucket is made, the bucket is
// packed into a flat copy (its separate gradients let go) and, in ZeRO's gradients stage,
// reduce-scattered into this rank's chunk, or else all-reduced in place (the flat copy is the
// gradients from then on); buckets go from the last to the first (a bucket done early waits
// for those before it).
struct BucketSync {
  std::vector<std::vector<std::pair<size_t, int64_t>>> layer_grads;  // per layer: (bucket, its gradients' bytes there)
  std::vector<int64_t> flat, chunk;                                  // per bucket (all-reduce: no chunk)
  bool all_reduce = false;
};

// inputs: bytes the caller holds until forward ends (the images and, on several ranks, this
// rank's stripe copy, which is the first layer's input); that input stays while the first
// layer keeps it for backward.
// trace: when given, every operation's live bytes (the predicted within-step timeline).
// sync: when given, the buckets reduce-scattered or all-reduced inside backward.
// prefetch (ZeRO's weights stage): a layer that gathers its weights (LayerMemory::gathered)
// also starts gathering the next such layer to run (forward: the one after it, backward: the
// one before), which stays until that one is done.
StepPeak simulate_step(const std::vector<LayerMemory>& layers, const std::vector<Segment>& segments, int64_t inputs,
                       std::vector<TracePoint>* trace = nullptr, const BucketSync* sync = nullptr,
                       bool prefetch = false);

// Checkpoint segments of ConvNeXt: each block, or each stage (downsample + blocks); none without a level.
std::vector<Segment> checkpoint_segments(const std::vector<LayerMemory>& layers,
                                         std::optional<config::CheckpointLevel> level);

}  // namespace halo::memory
