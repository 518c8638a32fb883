// Predicted memory of an experiment per rank, before anything runs: weights, gradients,
// optimizer state, saved activations layer by layer, the backward peak, buffers, slack.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/ConvNeXtVariant.h"
#include "config/ExperimentConfig.h"
#include "memory/ActivationModel.h"
#include "memory/StepSimulator.h"
#include "memory/StepTime.h"

namespace halo::memory {

struct RankPrediction {
  int rank = 0;  // sp index (dp replicas are identical)
  int64_t weights = 0, optimizer_state = 0;
  int64_t gradients = 0;           // held from step to step: none (backward makes them; the update lets them go)
  int64_t scaler_and_buffers = 0;  // module buffers (BatchNorm's running statistics); the loss scaler holds no tensor
  int64_t inputs = 0;              // the step's images (and the stripe copy at sp > 1), held through forward
  int64_t saved_activations = 0;   // saved for backward when backward begins (the input the stem keeps excluded)
  int64_t backward_transient = 0;  // activation peak above inputs + saved (recompute, gradients in flight)
  // Above the fixed state: the gradient sync (world > 1; one bucket's flat copy, or with
  // shard_state gradients the gradients made in backward and this rank's chunks), and the
  // optimizer step (the gradient norm's and the update's temporaries, ZeRO's gradient chunks).
  int64_t comm_buffers = 0;
  int64_t optimizer_transient = 0;
  int64_t activation_peak = 0;      // peak above the step's starting level (`halo bench memory`'s activation)
  int64_t gradients_at_peak = 0;    // of activation_peak: the parameter gradients made by then (or the sync's copies)
  int64_t peak = 0;                 // weights + gradients (held) + optimizer + buffers + activation_peak
  int64_t allocator_slack = 0;      // CUDA: reserved beyond allocated (estimate); CPU: 0 (exact counts)
  int64_t reserved = 0;             // peak + slack
  std::string peak_at;              // where the peak happens
  std::vector<LayerMemory> layers;  // per layer, forward order
  // ZeRO's gradients stage (world > 1): the buckets backward reduce-scatters (simulate_step's)
  std::optional<BucketSync> bucket_sync;
  // ZeRO's weights stage: gathering a block also prefetches the next to run (simulate_step's)
  bool prefetch_weights = false;
};

struct Prediction {
  std::string arch;
  config::Strategy strategy = config::Strategy::None;
  std::optional<config::CheckpointLevel> checkpoint;  // none when the strategy does not checkpoint
  config::Precision precision = config::Precision::Fp32;
  int sp = 1, dp = 1;
  config::ShardState shard_state = config::ShardState::None;  // ZeRO over sp x dp ranks (none at world 1)
  DeviceKind device = DeviceKind::Cpu;
  int64_t parameters = 0;
  std::vector<RankPrediction> ranks;  // one per sp rank
  StepTimeEstimate time;              // one step, with `rates`
  MachineRates rates;
  const RankPrediction& worst() const;  // the rank with the largest peak
};

// The model's parameter count from the variant's layer list (no weights allocated).
int64_t parameter_count(const arch::ConvNeXtVariant& v, int64_t classes);

// Why the planner cannot predict this experiment (an unknown backbone; a ResNet or RegNet at
// bf16/fp16, which it models at fp32 only), or nullopt when it can. predict() throws
// util::Error with this text; callers that can go on without a prediction (bench memory, the
// workbench) ask first.
std::optional<std::string> unplanned(const config::ExperimentConfig& cfg);
bool plans(const config::ExperimentConfig& cfg);

// util::Error for an unknown architecture or a width that cannot be sharded over sp.
Prediction predict(const config::ExperimentConfig& cfg, const MachineRates& rates);
Prediction predict(const config::ExperimentConfig& cfg);  // stored rates for the config's device

}  // namespace halo::memory
