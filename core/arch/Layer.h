// One layer of a model variant as data: its kind, place (stage, block), channels, the convs
// and norms it contains and the parameter tensors it owns, named as timm's checkpoints are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shard/ConvSpec.h"

namespace halo::arch {

// What a layer computes; each kind is one structure the model, the memory model and the
// step-time estimate know. A new backbone adds kinds and rows, not special cases.
enum class LayerKind {
  PatchStem,           // k x k / k conv on non-overlapping patches, LayerNorm2d (ConvNeXt's stem)
  NormConvDownsample,  // LayerNorm2d, then a k x k / k conv (ConvNeXt between stages)
  ConvNeXtBlock,       // depthwise conv_dw, LayerNorm, MLP (fc1, GELU, fc2), layer scale, residual
  NormMlpHead,         // global average pool, LayerNorm, Linear (timm's NormMlpClassifierHead)
  ResNetStem,          // 7x7/2 conv1, BatchNorm bn1, ReLU, 3x3/2 max-pool (timm's ResNet, top level)
  BasicBlock,          // 3x3 conv1 (stride s), BN, ReLU, 3x3 conv2, BN, shortcut, ReLU
  Bottleneck,          // 1x1 conv1, BN, ReLU, 3x3 conv2 (stride s), BN, ReLU, 1x1 conv3 (4x), BN, shortcut, ReLU
  PoolFcHead,          // global average pool, Linear fc (timm's ResNet fc, RegNet's head.fc)
  RegNetStem,          // 3x3/2 conv, BatchNorm, ReLU (timm's RegNet stem: ConvNormAct)
  RegNetBlock,  // 1x1 conv1, 3x3 grouped conv2 (stride s), SE (pool, fc1, ReLU, fc2, sigmoid), 1x1 conv3, shortcut,
                // ReLU
};

const char* name_of(LayerKind kind);  // "patch_stem", ...

// A convolution of the layer (a Linear is a 1x1 conv run on channels-last pixels).
struct Conv {
  std::string name;  // module name inside the layer: "0", "conv_dw", "mlp.fc1"
  shard::ConvSpec spec;
  int64_t in_channels = 0, out_channels = 0;
  bool bias = true;
  bool linear = false;                        // torch.nn.Linear on (..., C): weight (out, in); spec is 1x1
  std::vector<int64_t> weight_shape() const;  // (out, in/groups, kH, kW), or (out, in) when linear
  int64_t weight_elements() const;            // also its multiply-adds per output pixel
};

// A normalisation of the layer with weight and bias (C): LayerNorm over channels, or
// BatchNorm (statistics over the batch and the whole map, running mean and variance buffers).
struct Norm {
  std::string name;  // module name inside the layer: "1", "norm", "bn1", "downsample.1"
  int64_t channels = 0;
  double eps = 1e-6;
  bool batch = false;  // BatchNorm2d
};

// An op on the layer's main path that reads across W (a conv with a W kernel or stride above
// 1, a pooling window), in forward order: the layer's output stripes follow from these. A
// side path (a strided 1x1 shortcut) lands on the same stripes and is not listed.
struct PathOp {
  std::string name;  // the module's full name: "stem.0", "conv1", "maxpool", "layer2.0.conv1"
  shard::ConvSpec spec;
};

// One parameter tensor the layer owns.
struct Parameter {
  std::string name;  // full timm name: "stages.0.blocks.0.mlp.fc1.weight"
  std::vector<int64_t> shape;
  int64_t numel() const;
};

struct Layer {
  std::string name;  // timm module prefix: "stem", "stages.1.downsample", "stages.0.blocks.2", "head"
  LayerKind kind = LayerKind::PatchStem;
  int stage = -1;  // -1: stem; 0.. the stages; the head: the number of stages
  int block = -1;  // index in its stage (blocks only)
  int64_t in_channels = 0, out_channels = 0;
  int64_t hidden = 0;                 // MLP width of a block; 0 elsewhere
  std::vector<Conv> convs;            // forward order
  std::vector<Norm> norms;            // forward order
  std::vector<Parameter> parameters;  // as named_parameters() lists them
  std::optional<size_t> across_w;     // index in convs of the first conv that reads across W (none: the head)
  std::vector<PathOp> path;           // every op that reads across W, in order; path[0] is convs[*across_w]

  std::string qualified(std::string_view part) const { return name + "." + std::string(part); }
  // The layer's stride along W (the product of its path's strides).
  int64_t stride_w() const;
  // Appends conv `c` of module `module` ("stem.0", "layer1.0.conv2", "s1.b1.conv1.conv"): its
  // weight (and bias) under that name and, on the main path, the conv in `path` (and
  // `across_w` for the first) when it reads across W (a W kernel or stride above 1).
  void add_conv(Conv c, const std::string& module, bool on_path = true);
  // Appends norm `n` of module `module`: its weight and bias under that name.
  void add_norm(Norm n, const std::string& module);
  const Conv& conv(std::string_view part) const;  // util::Error when the layer has no such conv
  const Norm& norm(std::string_view part) const;  // util::Error when the layer has no such norm
  std::optional<shard::Window> window() const;    // the across-W conv's window
  int64_t parameter_count() const;
};

}  // namespace halo::arch
