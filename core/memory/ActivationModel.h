// What LibTorch's autograd keeps for backward in each layer of a backbone on one rank: saved
// bytes at their dtype (halo columns included), outputs, and the transients around them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/LayerList.h"

namespace halo::memory {

// Where the tensors live: CPU bytes are counted exactly; the CUDA caching allocator rounds
// every block up to 512 B (allocated) and carves large ones from 2 MiB-rounded segments.
enum class DeviceKind { Cpu, Cuda };

struct ActivationInput {
  arch::LayerList layers;  // the backbone's layer list, with its head
  int64_t images = 1;      // N * V: every view is one image through the backbone
  int64_t height = 64, width = 256;
  int sp = 1, rank = 0;
  int compute_bytes = 4;  // 4: fp32; 2: bf16/fp16 autocast
  bool fp16 = false;      // the 2 bytes are fp16 (some products then run in fp32)
  DeviceKind device = DeviceKind::Cpu;
  bool image_channels_last = false;  // the images arrive channels-last (config::images_channels_last)
  bool drop_path = false;
  bool recompute_cheap = false;  // parallel.recompute cheap: ConvNeXt blocks keep conv_dw's and fc1's outputs
  int threads = 1;               // intra-op threads per rank (LibTorch picks some kernels by it)
  int64_t round_to = 1;          // allocation granularity applied to every tensor (CUDA: 512)
  int64_t round_large_to = 1;    // granularity of tensors >= 1 MiB (CUDA segments: 2 MiB)
};

// One layer as the engine runs it. "Saved" bytes are new tensors autograd keeps until the
// layer's backward; `saves_input` says the layer also keeps its input alive.
struct LayerMemory {
  std::string name;  // "stem", "stages.1.downsample", "stages.0.blocks.2", "head"
  int stage = -1;    // -1: stem, 0..3, 4: head
  bool block = false;
  // A block whose recompute-and-backward peaks after its parameter gradients are made (a
  // ConvNeXt block: the depthwise conv comes last); else, like every block's plain backward,
  // before them (a ResNet block: its last conv's weight gradient first).
  bool recompute_peaks_after_grads = false;
  int64_t channels = 0, height = 0, columns = 0;  // output shape on this rank (W stripe)
  int64_t halo_left = 0, halo_right = 0;          // extra input columns (peers + padding) of its conv
  int64_t in = 0, out = 0;                        // bytes of input / output activation
  bool saves_input = false;
  bool keeps_output = false;             // autograd keeps the output until this layer's backward (a last ReLU)
  int64_t saved = 0;                     // new bytes kept for backward
  int64_t forward_extra = 0;             // transient above in + saved + out inside the forward
  int64_t nograd_extra = 0;              // transient above in + out when run without grad (checkpointed)
  int64_t backward_extra = 0;            // transient above (saved still held + grad of output), input grad included
  int64_t recompute_backward_extra = 0;  // the same inside a recomputation, whose caller holds the output
  // Where recompute_peaks_after_grads: the transient beside the block's parameter gradients once
  // they are made, apart from recompute_backward_extra before them (empty: that one, beside them).
  std::optional<int64_t> after_grads_extra;
  int64_t returned_grads = 0;  // ... and the gradients it returns then (made, or added into held ones)
  // Added to those two in a block when its parameter gradients are new tensors (param_grad > 0):
  // a ResNet block's later ops in backward run beside its earlier ops' weight gradients (a plain
  // layer's peak counts all its gradients already).
  int64_t new_grads_extra = 0, new_grads_recompute_extra = 0;
  // forward_extra inside a recomputation of this layer alone whose output nothing reads (a
  // block-checkpointed ConvNeXt block stops at fc1: model::recompute_output_unread); none: the same
  std::optional<int64_t> recompute_forward_extra;
  int64_t in_grad = 0;  // bytes of the gradient it returns for its input
  // Bytes of its parameters' gradients its backward makes and keeps through the step (set by
  // the planner: gradients are made in backward and let go after the update).
  int64_t param_grad = 0;
  // ZeRO's weights stage: bytes of its whole weights, all-gathered while it runs (forward,
  // recompute, backward) and freed after (set by the planner; 0: held from step to step).
  int64_t gathered = 0;
  // A ConvNeXt block whose input (the fp32 stream) is wider than the autocast dtype, as it runs
  // on that input's cast: checkpointed alone, it keeps only the cast and recomputes from it
  // (model::checkpointed_residual). Null: a checkpoint keeps the input itself.
  std::shared_ptr<const LayerMemory> on_cast_input;
  int64_t halo_bytes = 0;  // bytes received + sent by its halo exchange per forward
  double flops = 0;        // forward multiply-adds x 2
  double bytes_moved = 0;  // forward bytes read + written (for memory-bound time)
};

// Every layer in forward order, for one rank: stem, per stage (downsample,) blocks, head.
// util::Error when the width cannot shard, or for a backbone the planner has no rules for.
std::vector<LayerMemory> activation_layers(const ActivationInput& in);

// bytes rounded as the allocator of `in` hands them out.
int64_t allocated_bytes(int64_t bytes, const ActivationInput& in);

// Whether this CPU runs oneDNN's AVX-512 kernels, whose scratch differs from the AVX2 ones'
// (the rules that depend on it say which).
bool cpu_avx512();

}  // namespace halo::memory
