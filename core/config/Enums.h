// The experiment's named choices as enums, each with one table of its spellings in
// experiment files: to_string / from_string / names read that table and nothing else.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace halo::config {

enum class Task { Convnext, OpenLaneV2 };
enum class DataSource { Synthetic, OpenLaneV2 };
enum class EvalSplit { Val, Train };
enum class Strategy { None, Checkpoint, Tp, TpCheckpoint };
enum class CheckpointLevel { Block, Stage };
enum class Backend { Auto, Gloo, Nccl };
enum class Device { Cpu, Cuda };
enum class OptimizerKind { AdamW, Sgd, Lamb };
enum class Precision { Fp32, Bf16, Fp16 };
enum class NonFinite { Stop, Skip };  // a NaN/inf loss or gradient the fp16 loss scaler does not handle
// ZeRO's stages over the world (dp x sp ranks): what each rank keeps of 1/world only.
// Optimizer: the optimizer state; Gradients: that and the gradients (reduce-scattered, not
// all-reduced, and freed after the step); Weights: that and each backbone block's weights,
// all-gathered just before the block runs (forward, recompute, backward) and freed after.
enum class ShardState { None, Optimizer, Gradients, Weights };
enum class Recompute { None, Cheap };  // cheap: ConvNeXt blocks recompute LayerNorm, GELU in backward
// The CPU kernels of those blocks' per-pixel products: cpu (the default) by the CPU's kind, the
// same on every run of a host; auto times both when a rank starts (and may choose differently
// from run to run where the two are close).
enum class Pointwise { Cpu, Auto, Gemm, OneDnn };

template <class E>
struct EnumTable;  // static constexpr std::array<std::pair<E, std::string_view>, N> names

#define HALO_ENUM_TABLE(E, ...)                                                                       \
  template <>                                                                                         \
  struct EnumTable<E> {                                                                               \
    static constexpr std::array names = std::to_array<std::pair<E, std::string_view>>({__VA_ARGS__}); \
  }

HALO_ENUM_TABLE(Task, {Task::Convnext, "convnext"}, {Task::OpenLaneV2, "openlanev2"});
HALO_ENUM_TABLE(DataSource, {DataSource::Synthetic, "synthetic"}, {DataSource::OpenLaneV2, "openlanev2"});
HALO_ENUM_TABLE(EvalSplit, {EvalSplit::Val, "val"}, {EvalSplit::Train, "train"});
HALO_ENUM_TABLE(Strategy, {Strategy::None, "none"}, {Strategy::Checkpoint, "checkpoint"}, {Strategy::Tp, "tp"},
                {Strategy::TpCheckpoint, "tp+checkpoint"});
HALO_ENUM_TABLE(CheckpointLevel, {CheckpointLevel::Block, "block"}, {CheckpointLevel::Stage, "stage"});
HALO_ENUM_TABLE(Backend, {Backend::Auto, "auto"}, {Backend::Gloo, "gloo"}, {Backend::Nccl, "nccl"});
HALO_ENUM_TABLE(Device, {Device::Cpu, "cpu"}, {Device::Cuda, "cuda"});
HALO_ENUM_TABLE(OptimizerKind, {OptimizerKind::AdamW, "adamw"}, {OptimizerKind::Sgd, "sgd"},
                {OptimizerKind::Lamb, "lamb"});
HALO_ENUM_TABLE(Precision, {Precision::Fp32, "fp32"}, {Precision::Bf16, "bf16"}, {Precision::Fp16, "fp16"});
HALO_ENUM_TABLE(NonFinite, {NonFinite::Stop, "stop"}, {NonFinite::Skip, "skip"});
HALO_ENUM_TABLE(ShardState, {ShardState::None, "none"}, {ShardState::Optimizer, "optimizer"},
                {ShardState::Gradients, "gradients"}, {ShardState::Weights, "weights"});
HALO_ENUM_TABLE(Recompute, {Recompute::None, "none"}, {Recompute::Cheap, "cheap"});
HALO_ENUM_TABLE(Pointwise, {Pointwise::Cpu, "cpu"}, {Pointwise::Auto, "auto"}, {Pointwise::Gemm, "gemm"},
                {Pointwise::OneDnn, "onednn"});
#undef HALO_ENUM_TABLE

template <class E>
constexpr std::string_view to_string(E e) {
  for (const auto& [value, name] : EnumTable<E>::names)
    if (value == e) return name;
  return "?";
}

template <class E>
std::optional<E> from_string(std::string_view s) {
  for (const auto& [value, name] : EnumTable<E>::names)
    if (name == s) return value;
  return std::nullopt;
}

template <class E>
std::vector<std::string_view> names() {
  std::vector<std::string_view> out;
  for (const auto& entry : EnumTable<E>::names) out.push_back(entry.second);
  return out;
}

template <class E>
std::string name_of(E e) {
  return std::string(to_string(e));
}

// Strategy = (shards the width?) x (checkpoints?).
constexpr bool shards(Strategy s) { return s == Strategy::Tp || s == Strategy::TpCheckpoint; }
constexpr bool checkpoints(Strategy s) { return s == Strategy::Checkpoint || s == Strategy::TpCheckpoint; }
constexpr Strategy make_strategy(bool shard, bool checkpoint) {
  return shard ? (checkpoint ? Strategy::TpCheckpoint : Strategy::Tp)
               : (checkpoint ? Strategy::Checkpoint : Strategy::None);
}
// The checkpoint level a strategy runs with: none when it does not checkpoint.
constexpr std::optional<CheckpointLevel> checkpoint_of(Strategy s, CheckpointLevel level) {
  return checkpoints(s) ? std::optional(level) : std::nullopt;
}
// "none", "block" or "stage".
inline std::string checkpoint_label(std::optional<CheckpointLevel> level) { return level ? name_of(*level) : "none"; }
// A setup label's ZeRO suffix ("tp4+checkpoint+zero2"): "", "+zero1" (optimizer), "+zero2"
// (gradients), "+zero3" (weights).
constexpr std::string_view zero_suffix(ShardState s) {
  switch (s) {
    case ShardState::Optimizer:
      return "+zero1";
    case ShardState::Gradients:
      return "+zero2";
    case ShardState::Weights:
      return "+zero3";
    case ShardState::None:
      break;
  }
  return "";
}
// Gradients reduce-scattered inside the last backward (ZeRO's gradients and weights stages).
constexpr bool scatters_gradients(ShardState s) { return s == ShardState::Gradients || s == ShardState::Weights; }
// ZeRO's weights stage: gathering a block also starts gathering the next block to run, unless
// whole stages are checkpointed (the next block to run is then not a neighbour).
constexpr bool prefetches_weights(Strategy s, CheckpointLevel level) {
  return checkpoint_of(s, level) != CheckpointLevel::Stage;
}
// Bytes per element of the compute dtype (autocast) for a precision.
constexpr int compute_bytes(Precision p) { return p == Precision::Fp32 ? 4 : 2; }
// The task's images arrive channels-last: the synthetic classification data on the CPU, whose
// stem conv then reads them in place (the trainer draws them so, the memory planner counts so).
constexpr bool images_channels_last(Task t, Device d) { return t == Task::Convnext && d == Device::Cpu; }

}  // namespace halo::config
