// Assembles the per-rank prediction: fixed state (weights, gradients, optimizer moments)
// plus the simulated step (activations, recompute, gradient buckets, optimizer temporaries).
#include "memory/MemoryPlanner.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "arch/Backbones.h"
#include "arch/ConvNeXtLayers.h"
#include "config/ExperimentConfig.h"
#include "memory/OpenLaneHeads.h"
#include "memory/StepSimulator.h"
#include "shard/StateBuckets.h"
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
  if (cfg.task == config::Task::OpenLaneV2 && cfg.train.precision != config::Precision::Fp32)
    return fmt::format("the memory planner models the OpenLane-V2 neck and heads at fp32 only (train.precision is {})",
                       config::name_of(cfg.train.precision));
  if (*family != arch::Family::ConvNeXt && cfg.train.precision != config::Precision::Fp32)
    return fmt::format("the memory planner models {} at fp32 only (train.precision is {})", cfg.model.arch,
                       config::name_of(cfg.train.precision));
  return std::nullopt;
}

bool plans(const config::ExperimentConfig& cfg) { return !unplanned(cfg).has_value(); }

namespace {

bool openlane(const config::ExperimentConfig& cfg) { return cfg.task == config::Task::OpenLaneV2; }

OpenLaneDims openlane_dims(const config::ExperimentConfig& cfg) {
  OpenLaneDims d;
  d.dim = cfg.model.dim;
  return d;
}

// The last layer of a backbone stage on this rank (its output feeds the OpenLane neck).
const LayerMemory& stage_output(const std::vector<LayerMemory>& layers, int stage) {
  for (size_t i = layers.size(); i-- > 0;)
    if (layers[i].stage == stage) return layers[i];
  throw util::Error(fmt::format("the backbone has no stage {} for the OpenLane-V2 neck", stage),
                    "choose a backbone with four stages");
}

int64_t stage_channels(const arch::LayerList& layers, int stage) {
  int64_t c = 0;
  for (const arch::Layer& l : layers)
    if (l.stage == stage) c = l.out_channels;
  return c;
}

// Every parameter of the model: the backbone's, and for OpenLane-V2 the neck's and heads'.
std::vector<arch::Parameter> model_parameters(const config::ExperimentConfig& cfg, const arch::LayerList& layers) {
  std::vector<arch::Parameter> params = layers.parameters();
  if (openlane(cfg)) {
    const auto heads =
        openlane_head_parameters(openlane_dims(cfg), stage_channels(layers, 2), stage_channels(layers, 3));
    params.insert(params.end(), heads.begin(), heads.end());
  }
  return params;
}

// The rank's layers in forward order: the backbone's, and for OpenLane-V2 the neck and heads
// as one more.
std::vector<LayerMemory> model_rows(const config::ExperimentConfig& cfg, const ActivationInput& in) {
  std::vector<LayerMemory> rows = activation_layers(in);
  if (openlane(cfg))
    rows.push_back(
        openlane_heads_layer(openlane_dims(cfg), cfg.data.batch, stage_output(rows, 2), stage_output(rows, 3), in));
  return rows;
}

// The step's images held through forward: this rank's stripe only, the first row's input (the
// synthetic classification data and OpenLane-V2's loader both make the stripe alone).
int64_t step_inputs(const std::vector<LayerMemory>& rows) { return rows.front().in; }

// Per parameter, the row whose backward makes its gradient: the layer that lists it (the
// OpenLane neck's and heads' belong to the last row).
std::vector<size_t> param_rows(const std::vector<arch::Parameter>& params, const arch::LayerList& layers,
                               const std::vector<LayerMemory>& rows) {
  std::map<std::string, size_t> row_of_layer;
  for (size_t i = 0; i < rows.size(); ++i) row_of_layer[rows[i].name] = i;
  std::map<std::string, size_t> row_of_param;
  for (const arch::Layer& l : layers)
    for (const arch::Parameter& p : l.parameters)
      if (auto it = row_of_layer.find(l.name); it != row_of_layer.end()) row_of_param[p.name] = it->second;
  std::vector<size_t> out;
  for (const arch::Parameter& p : params) {
    const auto it = row_of_param.find(p.name);
    out.push_back(it == row_of_param.end() ? rows.size() - 1 : it->second);
  }
  return out;
}

ActivationInput activation_input(const config::ExperimentConfig& cfg, int rank, bool reserved) {
  if (auto why = unplanned(cfg))
    throw util::Error(*why, arch::backbone_family(cfg.model.arch)
                                ? "train it and read the per-rank memory the run measures (the workbench's Memory tab)"
                                : "choose one of: " + arch::backbone_names());
  ActivationInput in;
  // OpenLane-V2's backbone has no classifier: its stages feed the neck.
  in.layers = *arch::backbone_layers(cfg.model.arch, openlane(cfg) ? 0 : cfg.model.num_classes);
  in.images = cfg.data.batch * cfg.data.views;
  in.height = cfg.data.height;
  in.width = cfg.data.width;
  in.sp = config::shards(cfg.parallel.strategy) ? cfg.parallel.sp : 1;
  in.rank = rank;
  in.compute_bytes = config::compute_bytes(cfg.train.precision);
  in.fp16 = cfg.train.precision == config::Precision::Fp16;
  in.device = cfg.parallel.device == config::Device::Cuda ? DeviceKind::Cuda : DeviceKind::Cpu;
  in.image_channels_last = config::images_channels_last(cfg.task, cfg.parallel.device);
  in.drop_path = cfg.model.drop_path > 0;
  in.recompute_cheap = cfg.parallel.recompute == config::Recompute::Cheap;
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

// The fixed state of one rank and the step's transients outside forward and backward.
struct State {
  int64_t weights = 0, gradients = 0, optimizer_state = 0;  // held from step to step
  // Gradients are made in backward and let go after the update (ZeRO's gradients stage: after
  // the sync): no gradient is held from step to step.
  int64_t whole_gradients = 0;  // every parameter's gradient (held through later micro-steps)
  int64_t sync_peak = 0;        // live above the fixed state during the gradient sync
  int64_t optimizer_peak = 0;   // ... during the gradient norm and the update
  int64_t optimizer_grads =
      0;  // of optimizer_peak: gradients (whole ones, ZeRO's chunks); the sync's are all gradients
  std::string sync_name = "gradient all-reduce";
};

// ShardedState's buckets as the planner sees them: GradSync's, and in ZeRO's weights stage
// (world > 1) a new one where the backbone block a parameter streams with changes.
struct PlannedBucket {
  std::vector<size_t> params;  // indices into the parameter list
  int64_t elements = 0;
  bool streamed = false;  // a block's: only this rank's chunk is held between its uses
};

std::vector<PlannedBucket> planned_buckets(const config::ExperimentConfig& cfg,
                                           const std::vector<arch::Parameter>& params, const arch::LayerList& layers,
                                           int world) {
  std::vector<int64_t> bytes;
  std::vector<std::string> names;
  for (const auto& p : params) {
    bytes.push_back(p.numel() * 4);
    names.push_back(p.name);
  }
  const bool stream = world > 1 && cfg.parallel.shard_state == config::ShardState::Weights;
  const std::vector<std::string> block = stream ? layers.block_of(names) : std::vector<std::string>(params.size());
  std::map<std::string, int> index;  // per block, a group of its own (0: outside every block)
  std::vector<int> group;
  for (const std::string& b : block)
    group.push_back(b.empty() ? 0 : index.emplace(b, static_cast<int>(index.size()) + 1).first->second);
  std::vector<PlannedBucket> out;
  for (auto& indices : shard::state_buckets(bytes, group, shard::kStateBucketBytes)) {
    PlannedBucket b;
    for (size_t i : indices) b.elements += params[i].numel();
    b.streamed = !block[indices.front()].empty();
    b.params = std::move(indices);
    out.push_back(std::move(b));
  }
  return out;
}

// GradSync's buckets: the gradients all-reduced inside backward, whole rows packed up to
// kSyncBucketBytes (shard::layer_buckets), so each is complete at the end of a row's backward.
std::vector<PlannedBucket> sync_buckets(const std::vector<arch::Parameter>& params, const std::vector<size_t>& row_of) {
  std::vector<int64_t> bytes;
  std::vector<int> row;
  for (size_t i = 0; i < params.size(); ++i) {
    bytes.push_back(params[i].numel() * 4);
    row.push_back(static_cast<int>(row_of.at(i)));
  }
  std::vector<PlannedBucket> out;
  for (auto& indices : shard::layer_buckets(bytes, row, {}, shard::kSyncBucketBytes)) {
    PlannedBucket b;
    for (size_t i : indices) b.elements += params[i].numel();
    b.params = std::move(indices);
    out.push_back(std::move(b));
  }
  return out;
}

// Each streamed block's row gathers its buckets' whole storage while it runs.
void set_gathered(std::vector<LayerMemory>& rows, const std::vector<PlannedBucket>& buckets,
                  const std::vector<size_t>& row_of, int world, const ActivationInput& in) {
  for (const PlannedBucket& b : buckets)
    if (b.streamed)
      rows[row_of[b.params.front()]].gathered +=
          allocated_bytes(shard::chunk_elements(b.elements, world) * world * 4, in);
}

// Fixed state and sync/optimizer transients: every parameter's own block (half a granule
// of rounding each on average), or ZeRO's flat buckets of which this rank updates one chunk
// (a streamed bucket: only its chunk is held).
State state_memory(const config::ExperimentConfig& cfg, const std::vector<arch::Parameter>& params,
                   const std::vector<PlannedBucket>& buckets, const std::vector<PlannedBucket>& synced_buckets,
                   int world, const ActivationInput& in) {
  const auto R = [&](int64_t b) { return allocated_bytes(b, in); };
  int64_t P = 0, largest = 0;
  for (const auto& p : params) {
    P += p.numel();
    largest = std::max(largest, p.numel());
  }
  const int64_t tensors = static_cast<int64_t>(params.size());
  const int slots = cfg.optim.name == config::OptimizerKind::Sgd ? 1 : 2;
  const config::ShardState zero = world > 1 ? cfg.parallel.shard_state : config::ShardState::None;
  State s;
  const int64_t whole = R(P * 4) + tensors * (in.round_to / 2);
  // The largest parameter's temporaries: on a GPU its gradient's square in double for the norm
  // (2 x 8 bytes per element; a CPU reads each gradient in place, train::square_sum), then the
  // update's (SGD's decayed gradient and momentum sum; LAMB's update, built from four; AdamW's
  // fused kernel has none).
  const bool cpu = in.device == DeviceKind::Cpu;
  auto update_transient = [&](int64_t n) {
    const int64_t norm = cpu ? 0 : 2 * R(n * 8);
    switch (cfg.optim.name) {
      case config::OptimizerKind::Sgd:
        return 2 * R(n * 4);
      case config::OptimizerKind::AdamW:
        return norm;
      default:
        return std::max(norm, 5 * R(n * 4));
    }
  };
  // After backward on several ranks the gradients are GradSync's flat buckets, all-reduced in
  // place (bucket_sync); each was packed once its gradients were complete.
  int64_t synced = whole;
  if (world > 1) {
    synced = 0;
    for (const PlannedBucket& b : synced_buckets) synced += R(b.elements * 4);
  }
  s.whole_gradients = whole;
  if (zero == config::ShardState::None) {
    s.weights = whole;
    s.optimizer_state = slots * whole;
    s.sync_peak = world > 1 ? synced : 0;  // the last buckets' all-reduce waited for
    s.optimizer_peak = synced + update_transient(largest);
    s.optimizer_grads = synced;
    return s;
  }
  // ZeRO: per bucket, the flat storage (world chunks), this rank's chunk of gradients and state.
  int64_t chunks = 0, chunk_max = 0;
  for (const PlannedBucket& b : buckets) {
    const int64_t c = shard::chunk_elements(b.elements, world);
    s.weights += b.streamed ? R(c * 4) : R(c * world * 4);
    chunks += R(c * 4);
    chunk_max = std::max(chunk_max, c);
  }
  s.optimizer_state = slots * chunks;
  // Beside this rank's gradient chunks: the norm's double slices on a GPU (2 x 64 Ki elements),
  // then one chunk-sized temporary (AdamW's denominator, SGD's decayed gradient; the all-gather
  // works in place); LAMB keeps every bucket's update for the trust ratios, and builds one from four.
  const int64_t norm_slices = cpu ? 0 : 2 * R(std::min<int64_t>(chunk_max, 1 << 16) * 8);
  const int64_t opt = cfg.optim.name == config::OptimizerKind::Lamb
                          ? std::max(norm_slices, chunks + 4 * R(chunk_max * 4))
                          : std::max(norm_slices, R(chunk_max * 4));
  if (zero == config::ShardState::Optimizer) {  // whole gradients all-reduced, this rank's chunks cut from them
    s.sync_peak = synced;
    s.optimizer_peak = synced + chunks + opt;
    s.optimizer_grads = synced + chunks;
    return s;
  }
  // Gradients: made in backward (and held through the earlier micro-steps of an accumulation);
  // the last backward reduce-scatters each bucket once it is complete (bucket_sync), so after
  // it only this rank's chunks are left.
  s.sync_name = "gradient reduce-scatter";
  s.sync_peak = chunks;
  s.optimizer_peak = chunks + opt;
  s.optimizer_grads = chunks;
  return s;
}

// The gradient sync inside backward on several ranks: which row's gradients fill which
// bucket; ZeRO's gradients stage reduce-scatters its own buckets, otherwise GradSync all-reduces.
std::optional<BucketSync> bucket_sync(const config::ExperimentConfig& cfg, const std::vector<arch::Parameter>& params,
                                      const std::vector<PlannedBucket>& zero_buckets,
                                      const std::vector<PlannedBucket>& synced_buckets,
                                      const std::vector<size_t>& row_of, size_t rows, int world,
                                      const ActivationInput& in) {
  if (world == 1) return std::nullopt;
  BucketSync s;
  s.all_reduce = !config::scatters_gradients(cfg.parallel.shard_state);
  const std::vector<PlannedBucket>& buckets = s.all_reduce ? synced_buckets : zero_buckets;
  s.layer_grads.resize(rows);
  for (const PlannedBucket& bucket : buckets) {
    const size_t b = s.flat.size();
    for (size_t i : bucket.params) {
      auto& grads = s.layer_grads[row_of[i]];
      const int64_t g = allocated_bytes(params[i].numel() * 4, in);
      if (!grads.empty() && grads.back().first == b)
        grads.back().second += g;
      else
        grads.emplace_back(b, g);
    }
    if (s.all_reduce) {
      s.flat.push_back(allocated_bytes(bucket.elements * 4, in));
      continue;
    }
    const int64_t c = shard::chunk_elements(bucket.elements, world);
    s.flat.push_back(allocated_bytes(c * world * 4, in));
    s.chunk.push_back(allocated_bytes(c * 4, in));
  }
  return s;
}

// Each row's parameter gradients, made by its backward and kept through the step.
void set_param_grads(std::vector<LayerMemory>& rows, const std::vector<arch::Parameter>& params,
                     const std::vector<size_t>& row_of, const ActivationInput& in) {
  for (size_t i = 0; i < params.size(); ++i) rows[row_of[i]].param_grad += allocated_bytes(params[i].numel() * 4, in);
}

// The step's time: ZeRO's gradients stage reduce-scatters and all-gathers (an all-reduce's
// traffic); its optimizer stage all-reduces and then all-gathers the updated chunks too; its
// weights stage gathers each streamed block in forward and again in backward.
StepTimeEstimate step_time(const config::ExperimentConfig& cfg, const std::vector<LayerMemory>& layers,
                           const std::vector<Segment>& segments, int64_t parameter_bytes, int sp, int dp,
                           const MachineRates& rates) {
  StepTimeEstimate t = estimate_step_time(layers, segments, parameter_bytes, sp, dp, rates);
  const int world = sp * dp;
  if (world > 1 && cfg.parallel.shard_state == config::ShardState::Optimizer) {
    const double gather = static_cast<double>(parameter_bytes) / shard::kStateBucketBytes + 1;
    const double s = gather * rates.link_latency_s +
                     (world - 1.0) / world * static_cast<double>(parameter_bytes) / rates.link_bytes_per_s;
    t.allreduce_s += s;
    t.total_s += s;
  }
  if (world > 1 && cfg.parallel.shard_state == config::ShardState::Weights) {
    // Each streamed block is all-gathered twice (forward, backward) where ZeRO's gradients
    // stage all-gathers it once after the update: one more all-gather of its bytes, and a
    // collective's latency per gather unless the gathers are prefetched (then they wait on
    // compute, not the other way round).
    double streamed = 0, gathers = 0;
    for (const LayerMemory& l : layers)
      if (l.gathered > 0) {
        streamed += static_cast<double>(l.gathered);
        gathers += 2;
      }
    const bool prefetched = config::prefetches_weights(cfg.parallel.strategy, cfg.parallel.checkpoint_level);
    const double latency = prefetched ? 0.0 : gathers * rates.link_latency_s;
    const double s = latency + (world - 1.0) / world * streamed / rates.link_bytes_per_s;
    t.allreduce_s += s;
    t.total_s += s;
  }
  return t;
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
  p.shard_state = cfg.parallel.shard_state;
  p.rates = rates;
  const ActivationInput first = activation_input(cfg, 0, false);
  p.sp = first.sp;
  p.device = first.device;
  const arch::LayerList& model_layers = first.layers;
  const std::vector<arch::Parameter> params = model_parameters(cfg, model_layers);
  for (const arch::Parameter& q : params) p.parameters += q.numel();
  const int64_t P = p.parameters;
  const int world = p.sp * p.dp;
  const std::vector<PlannedBucket> buckets = planned_buckets(cfg, params, model_layers, world);
  const bool streams = std::any_of(buckets.begin(), buckets.end(), [](const auto& b) { return b.streamed; });
  for (int rank = 0; rank < p.sp; ++rank) {
    RankPrediction r;
    r.rank = rank;
    ActivationInput in = activation_input(cfg, rank, false);
    r.layers = model_rows(cfg, in);
    const auto segments = checkpoint_segments(r.layers, p.checkpoint);
    r.inputs = step_inputs(r.layers);
    const std::vector<size_t> row_of = param_rows(params, model_layers, r.layers);
    const std::vector<PlannedBucket> synced = sync_buckets(params, row_of);
    const State st = state_memory(cfg, params, buckets, synced, world, in);
    set_param_grads(r.layers, params, row_of, in);
    set_gathered(r.layers, buckets, row_of, world, in);
    r.bucket_sync = bucket_sync(cfg, params, buckets, synced, row_of, r.layers.size(), world, in);
    r.prefetch_weights = streams && config::prefetches_weights(cfg.parallel.strategy, cfg.parallel.checkpoint_level);
    StepPeak step = simulate_step(r.layers, segments, r.inputs, nullptr, r.bucket_sync ? &*r.bucket_sync : nullptr,
                                  r.prefetch_weights);
    if (cfg.train.accumulation > 1) {  // micro-steps after the first hold every gradient
      std::vector<LayerMemory> held = r.layers;
      for (LayerMemory& l : held) l.param_grad = 0;
      const StepPeak later = simulate_step(held, segments, r.inputs, nullptr, nullptr, r.prefetch_weights);
      if (later.peak + st.whole_gradients > step.peak) {
        step.peak = later.peak + st.whole_gradients;
        step.grads_at_peak = st.whole_gradients;
        step.where = later.where + " (a later micro-step: every gradient held)";
      }
    }
    r.weights = st.weights;
    r.gradients = st.gradients;
    r.optimizer_state = st.optimizer_state;
    r.scaler_and_buffers = buffer_bytes(model_layers, in);
    r.comm_buffers = st.sync_peak;
    r.optimizer_transient = st.optimizer_peak;
    r.saved_activations = step.saved_at_backward - (r.layers.front().saves_input ? r.layers.front().in : 0);
    r.backward_transient = step.peak - step.saved_at_backward;
    r.activation_peak = std::max({step.peak, r.comm_buffers, r.optimizer_transient});
    const bool at_step = step.peak >= std::max(r.comm_buffers, r.optimizer_transient);
    const bool at_sync = !at_step && r.comm_buffers >= r.optimizer_transient;
    r.peak_at = at_step ? step.where : at_sync ? st.sync_name : "optimizer step";
    r.gradients_at_peak = at_step ? step.grads_at_peak : at_sync ? st.sync_peak : st.optimizer_grads;
    r.peak = r.weights + r.gradients + r.optimizer_state + r.scaler_and_buffers + r.activation_peak;
    if (in.device == DeviceKind::Cuda) {
      const ActivationInput seg = activation_input(cfg, rank, true);
      auto layers = model_rows(cfg, seg);
      set_param_grads(layers, params, row_of, seg);
      set_gathered(layers, buckets, row_of, world, seg);
      const auto seg_sync = bucket_sync(cfg, params, buckets, synced, row_of, layers.size(), world, seg);
      const StepPeak reserved = simulate_step(layers, segments, step_inputs(layers), nullptr,
                                              seg_sync ? &*seg_sync : nullptr, r.prefetch_weights);
      r.allocator_slack = std::max<int64_t>(0, reserved.peak - step.peak) + (20 << 20);  // + the small-block pool
    }
    r.reserved = r.peak + r.allocator_slack;
    if (rank == 0) p.time = step_time(cfg, r.layers, segments, P * 4, p.sp, p.dp, rates);
    p.ranks.push_back(std::move(r));
  }
  return p;
}

}  // namespace halo::memory
