// Assembles the per-rank prediction: fixed state (weights, gradients, optimizer moments)
// plus the simulated step (activations, recompute, gradient buckets, optimizer temporaries).
#include "memory/MemoryPlanner.h"

#include <algorithm>

#include <fmt/format.h>

#include "arch/Backbones.h"
#include "arch/ConvNeXtLayers.h"
#include "config/ExperimentConfig.h"
#include "memory/StepSimulator.h"
#include "util/Error.h"

namespace halo::memory {

const RankPrediction& Prediction::worst() const {
  return *std::max_element(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.peak < b.peak; });
}

int64_t parameter_count(const arch::ConvNeXtVariant& v, int64_t classes) {
  return arch::convnext_layers(v, classes).parameter_count();
}

std::optional<std::string> unplanned(const config::ExperimentConfig& cfg) {
  const auto family = arch::backbone_family(cfg.model.arch);
  if (!family) return fmt::format("model.arch '{}' is unknown", cfg.model.arch);
  if (*family != arch::Family::ConvNeXt && cfg.train.precision != config::Precision::Fp32)
    return fmt::format("the memory planner models {} at fp32 only (train.precision is {})", cfg.model.arch,
                       config::name_of(cfg.train.precision));
  return std::nullopt;
}

bool plans(const config::ExperimentConfig& cfg) { return !unplanned(cfg).has_value(); }

namespace {

ActivationInput activation_input(const config::ExperimentConfig& cfg, int rank, bool reserved) {
  if (auto why = unplanned(cfg))
    throw util::Error(*why, arch::backbone_family(cfg.model.arch)
                                ? "train it and read the per-rank memory the run measures (the workbench's Memory tab)"
                                : "choose one of: " + arch::backbone_names());
  ActivationInput in;
  in.layers = *arch::backbone_layers(cfg.model.arch, cfg.model.num_classes);
  in.images = cfg.data.batch * cfg.data.views;
  in.height = cfg.data.height;
  in.width = cfg.data.width;
  in.sp = config::shards(cfg.parallel.strategy) ? cfg.parallel.sp : 1;
  in.rank = rank;
  in.compute_bytes = config::compute_bytes(cfg.train.precision);
  in.device = cfg.parallel.device == config::Device::Cuda ? DeviceKind::Cuda : DeviceKind::Cpu;
  in.drop_path = cfg.model.drop_path > 0;
  in.threads = cfg.parallel.threads_per_rank;
  if (in.device == DeviceKind::Cuda) {
    in.round_to = 512;
    if (reserved) in.round_large_to = 2 << 20;
  }
  return in;
}

// BatchNorm's running mean and variance (C each, fp32) and its step counter (one int64).
int64_t buffer_bytes(const arch::LayerList& layers, const ActivationInput& in) {
  int64_t b = 0;
  for (const arch::Layer& l : layers)
    for (const arch::Norm& n : l.norms)
      if (n.batch) b += 2 * allocated_bytes(n.channels * 4, in) + allocated_bytes(8, in);
  return b;
}

}  // namespace

Prediction predict(const config::ExperimentConfig& cfg) {
  return predict(cfg, stored_rates(cfg.parallel.device == config::Device::Cuda ? DeviceKind::Cuda : DeviceKind::Cpu));
}

Prediction predict(const config::ExperimentConfig& cfg, const MachineRates& rates) {
  Prediction p;
  p.arch = cfg.model.arch;
  p.strategy = cfg.parallel.strategy;
  p.checkpoint = config::checkpoint_of(cfg.parallel.strategy, cfg.parallel.checkpoint_level);
  p.precision = cfg.train.precision;
  p.dp = cfg.parallel.dp;
  p.rates = rates;
  const ActivationInput first = activation_input(cfg, 0, false);
  p.sp = first.sp;
  p.device = first.device;
  const arch::LayerList& model_layers = first.layers;
  p.parameters = model_layers.parameter_count();
  const int64_t tensors = static_cast<int64_t>(model_layers.parameters().size());
  const int64_t P = p.parameters;
  const int world = p.sp * p.dp;
  for (int rank = 0; rank < p.sp; ++rank) {
    RankPrediction r;
    r.rank = rank;
    ActivationInput in = activation_input(cfg, rank, false);
    const auto R = [&](int64_t b) { return allocated_bytes(b, in); };
    r.layers = activation_layers(in);
    const auto segments = checkpoint_segments(r.layers, p.checkpoint);
    r.inputs = R(in.images * 3 * in.height * in.width * 4) + (in.sp > 1 ? r.layers.front().in : 0);
    const StepPeak step = simulate_step(r.layers, segments, r.inputs);
    // Fixed state: fp32 weights and gradients (every tensor its own block), optimizer moments.
    r.weights = R(P * 4) + tensors * (in.round_to / 2);  // per-tensor rounding: half a granule each on average
    r.gradients = r.weights;
    r.optimizer_state = (cfg.optim.name == config::OptimizerKind::Sgd ? 1 : 2) * r.weights;
    r.scaler_and_buffers = buffer_bytes(model_layers, in);
    const int64_t n_max = model_layers.largest_parameter().numel();
    r.optimizer_transient =
        cfg.optim.name == config::OptimizerKind::Sgd ? 2 * R(n_max * 4) : std::max(2 * R(n_max * 8), 5 * R(n_max * 4));
    const int64_t bucket = 25 << 20;
    if (world > 1) r.comm_buffers = (P * 4 / bucket) * R(bucket) + R(P * 4 % bucket);
    r.saved_activations = step.saved_at_backward - (r.layers.front().saves_input ? r.layers.front().in : 0);
    r.backward_transient = step.peak - step.saved_at_backward;
    r.activation_peak = std::max({step.peak, r.comm_buffers, r.optimizer_transient});
    r.peak_at = step.peak >= std::max(r.comm_buffers, r.optimizer_transient) ? step.where
                : r.comm_buffers >= r.optimizer_transient                    ? "gradient all-reduce"
                                                                             : "optimizer step";
    r.peak = r.weights + r.gradients + r.optimizer_state + r.scaler_and_buffers + r.activation_peak;
    if (in.device == DeviceKind::Cuda) {
      const ActivationInput seg = activation_input(cfg, rank, true);
      const auto layers = activation_layers(seg);
      const StepPeak reserved = simulate_step(
          layers, segments,
          allocated_bytes(in.images * 3 * in.height * in.width * 4, seg) + (in.sp > 1 ? layers.front().in : 0));
      r.allocator_slack = std::max<int64_t>(0, reserved.peak - step.peak) + (20 << 20);  // + the small-block pool
    }
    r.reserved = r.peak + r.allocator_slack;
    if (rank == 0) p.time = estimate_step_time(r.layers, segments, P * 4, p.sp, p.dp, rates);
    p.ranks.push_back(std::move(r));
  }
  return p;
}

}  // namespace halo::memory
