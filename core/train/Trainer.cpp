// One optimizer step = `accumulation` micro-steps (the task's forward, backward; no communication
// but halos), then one gradient sync, unscale, agreed overflow check, global-norm clip, update.
// Randomness is a function of (seed, step, micro-step, dp group): resume replays exactly.
#include "train/Trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>
#ifdef HALO_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "data/PreviewImage.h"
#include "io/AtomicFile.h"
#include "io/TorchArchive.h"
#include "model/AutocastScope.h"
#include "model/ConvNeXt.h"
#include "model/LayerProbe.h"
#include "model/PointwiseKernel.h"
#include "model/ShardedConv2d.h"
#include "model/StateDict.h"
#include "model/WeightGate.h"
#include "parallel/GradSync.h"
#include "parallel/Mesh.h"
#include "parallel/ShardedState.h"
#include "shard/StateBuckets.h"
#include "train/LayoutRows.h"
#include "train/LossScaler.h"
#include "train/LrSchedule.h"
#include "train/OpenLaneEvaluation.h"
#include "train/Optimizer.h"
#include "train/ShardedOptimizer.h"
#include "train/SquareSum.h"
#include "train/TaskFactory.h"
#include "util/Error.h"

namespace halo::train {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

// parallel.pointwise onto the backbone's ConvNeXt blocks. auto times both kernels here, before
// any step (the probe draws from its own generator and its memory is gone before step 1); only
// fp32 CPU products can take oneDNN, and only where every rank chose it. Returns
// Trainer::pointwise_summary.
std::string choose_pointwise(const config::ExperimentConfig& cfg, const torch::Device& device,
                             model::BackboneImpl& backbone, parallel::Mesh& mesh) {
  using config::Pointwise;
  using model::PointwiseKernel;
  if (!backbone.set_pointwise_kernel(PointwiseKernel::Gemm)) return "";
  if (cfg.parallel.recompute != config::Recompute::Cheap)
    return "gemm (parallel.recompute none runs the plain ops, whose products are GEMMs)";
  if (cfg.parallel.pointwise == Pointwise::Gemm) return "gemm (parallel.pointwise)";
  if (!device.is_cpu() || cfg.train.precision != config::Precision::Fp32)
    return "gemm (oneDNN's kernel is used for fp32 CPU products only)";
  PointwiseKernel k = PointwiseKernel::OneDnn;
  std::string why = "parallel.pointwise";
  if (cfg.parallel.pointwise == Pointwise::Cpu) {
    const model::CpuKind cpu = model::this_cpu_kind();
    k = model::kernel_for_cpu(cpu);
    why = fmt::format("cpu: {}, {}", cpu.amd ? "AMD" : "not AMD", cpu.avx512f ? "AVX-512" : "no AVX-512");
  } else if (cfg.parallel.pointwise == Pointwise::Auto) {
    const model::PointwiseProbe p = model::probe_pointwise_kernels();
    k = p.faster;
    why = fmt::format("auto, probe: gemm {:.2f} ms, onednn {:.2f} ms", p.gemm_s * 1e3, p.onednn_s * 1e3);
  }
  // cpu and auto decide on each rank (hosts of one run may differ in CPU, probes in timing); all
  // ranks must run the same kernels, so the run takes oneDNN only where every rank chose it.
  if (cfg.parallel.pointwise != Pointwise::OneDnn) {
    const bool everywhere = mesh.world().every_rank(k == PointwiseKernel::OneDnn);
    if (k == PointwiseKernel::OneDnn && !everywhere) {
      k = PointwiseKernel::Gemm;
      why += "; another rank chose gemm";
    }
  }
  backbone.set_pointwise_kernel(k);
  return fmt::format("{} ({})", k == PointwiseKernel::OneDnn ? "onednn" : "gemm", why);
}

// "loss became NaN at step 7", "the gradient norm became +inf at step 7".
std::string nonfinite_text(const std::string& what, double value, int64_t step) {
  const char* shown = std::isnan(value) ? "NaN" : (value > 0 ? "+inf" : "-inf");
  return fmt::format("{} became {} at step {}", what, shown, step);
}

// Every sharded conv gets its layout name for the exchange clock: the backbone's convs by
// their name in the backbone ("stages.0.blocks.0.conv_dw"), the task's others by theirs.
void label_exchanges(torch::nn::Module& backbone, torch::nn::Module& task) {
  for (torch::nn::Module* m : {&backbone, &task})
    for (const auto& item : m->named_modules("", /*include_self=*/false))
      if (auto* conv = item.value()->as<model::ShardedConv2dImpl>(); conv && conv->label().empty())
        conv->set_label(item.key());
}

// A checkpoint's parameters and buffers into the module (no grad): util::Error naming the
// first one missing or misshaped.
void load_model_tensors(torch::nn::Module& module, torch::serialize::InputArchive& ar, const std::string& path) {
  for (auto& [name, p] : model::state_dict(module)) {
    at::Tensor t;
    if (!ar.try_read("model/" + name, t) || t.sizes() != p.sizes())
      throw util::Error(fmt::format("checkpoint {} has no tensor '{}' of shape {}", path, name, c10::str(p.sizes())),
                        "resume with the experiment the checkpoint was written with");
    p.copy_(t);
  }
}

// The model's blocks ask ZeRO's state for their weights. With prefetch, gathering a block
// also starts the all-gather of the block that runs next (forward: the one after it;
// backward: the one before), which then arrives while this one computes. Not inside a
// recompute, nor with whole stages checkpointed, where the next block to run is not a neighbour.
class StateGate : public model::WeightGate {
 public:
  StateGate(std::shared_ptr<parallel::ShardedState> s, bool prefetch) : s_(std::move(s)), prefetch_(prefetch) {}
  void gather(const std::string& unit, bool backward) override {
    s_->gather(unit);
    if (!prefetch_ || (!backward && model::recomputing())) return;
    if (auto next = s_->neighbour(unit, backward ? -1 : 1)) s_->prefetch(*next);
  }
  void release(const std::string& unit) override { s_->release(unit); }

 private:
  std::shared_ptr<parallel::ShardedState> s_;
  bool prefetch_;
};

double ms(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

torch::Device device_of(const config::ExperimentConfig& cfg, const parallel::Mesh& mesh) {
  if (cfg.parallel.device != config::Device::Cuda) return torch::kCPU;
#ifdef HALO_WITH_CUDA
  const int n = c10::cuda::device_count();
  if (n == 0) throw util::Error("parallel.device is cuda but no GPU is visible", "set parallel.device to cpu");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(mesh.rank() % n));
#else
  (void)mesh;
  throw util::Error("parallel.device is cuda but this Halo was built without CUDA", "set parallel.device to cpu");
#endif
}

}  // namespace

struct Trainer::State {
  torch::Device device{torch::kCPU};
  std::unique_ptr<TrainTask> task;                 // what trains: the model, its data and losses
  std::shared_ptr<model::BackboneImpl> backbone;   // task->backbone(), for the layout event
  std::unique_ptr<Optimizer> optim;                // parallel.shard_state none
  std::shared_ptr<parallel::ShardedState> shards;  // otherwise: ZeRO's flat buckets
  std::unique_ptr<ShardedOptimizer> sharded;       //   and the optimizer over this rank's chunks
  std::shared_ptr<model::WeightGate> gate;         //   and, streaming blocks' weights, their gate
  std::unique_ptr<parallel::GradSync> sync;
  LossScaler scaler{false};
  LrSchedule schedule;
  at::ScalarType autocast = at::kFloat;
  int64_t step = 0;
  bool keep_timeline = false;  // probe the next step
  std::optional<protocol::MemoryTimelineEvent> timeline;
  std::string pointwise;  // Trainer::pointwise_summary

  // ZeRO's weights stage: every block's weights gathered while it lives (none otherwise).
  std::unique_ptr<parallel::ShardedState::Whole> whole_weights() const {
    return gate ? std::make_unique<parallel::ShardedState::Whole>(*shards) : nullptr;
  }
};

Trainer::Trainer(const config::ExperimentConfig& cfg, std::shared_ptr<parallel::Mesh> mesh)
    : cfg_(cfg), mesh_(std::move(mesh)), s_(std::make_unique<State>()) {
  s_->device = device_of(cfg_, *mesh_);
  torch::manual_seed(cfg_.train.seed);  // identical initial weights on every rank
  s_->task = make_task(cfg_, s_->device, *mesh_);
  s_->backbone = s_->task->backbone();
  const bool ckpt = config::checkpoints(cfg_.parallel.strategy);
  if (ckpt)
    s_->backbone->set_checkpoint(cfg_.parallel.checkpoint_level == config::CheckpointLevel::Stage
                                     ? model::CheckpointLevel::Stage
                                     : model::CheckpointLevel::Block);
  // ResNet and RegNet have no ConvNeXt blocks: for them the setting changes nothing.
  s_->backbone->set_recompute_cheap(cfg_.parallel.recompute == config::Recompute::Cheap);
  s_->pointwise = choose_pointwise(cfg_, s_->device, *s_->backbone, *mesh_);
  shard::check_shardable(s_->backbone->layer_windows(), cfg_.data.width, mesh_->shape().sp);
  label_exchanges(*s_->backbone, s_->task->module());
  auto params = named_parameters();
  std::vector<std::string> names;  // the layer list's names, under the task's prefix
  for (const auto& [name, p] : params) names.push_back(name);
  const std::string prefix = backbone_prefix(s_->task->module(), *s_->backbone);
  const OptimizerOptions opts{cfg_.optim.name,  cfg_.optim.weight_decay, cfg_.optim.momentum,
                              cfg_.optim.beta1, cfg_.optim.beta2,        cfg_.optim.eps};
  TrainTask* task = s_->task.get();
  auto placement = [task](const std::string& name) { return task->placement(name); };
  if (cfg_.parallel.shard_state == config::ShardState::None) {
    s_->optim = std::make_unique<Optimizer>(params, opts);
  } else {
    // ZeRO's weights stage streams the backbone's blocks; the stem, downsamples, head and the
    // task's own parameters stay whole.
    const bool stream = cfg_.parallel.shard_state == config::ShardState::Weights && mesh_->world().size() > 1;
    std::vector<std::string> units;
    if (stream) units = s_->backbone->layers().block_of(names, prefix);
    s_->shards = std::make_shared<parallel::ShardedState>(params, placement, mesh_,
                                                          static_cast<size_t>(shard::kStateBucketBytes), units);
    s_->sharded = std::make_unique<ShardedOptimizer>(s_->shards, opts, mesh_);
    if (stream) {
      s_->gate = std::make_shared<StateGate>(
          s_->shards, config::prefetches_weights(cfg_.parallel.strategy, cfg_.parallel.checkpoint_level));
      model::WeightGate::open(s_->gate);
    }
  }
  // ZeRO's gradients stage reduce-scatters in backward with its own hooks; otherwise each
  // bucket's all-reduce starts in backward, buckets of whole layers (as the planner walks it).
  const bool overlap = !config::scatters_gradients(cfg_.parallel.shard_state);
  const std::vector<int> layer = s_->backbone->layers().layer_of(names, prefix);
  s_->sync = std::make_unique<parallel::GradSync>(params, placement, mesh_,
                                                  static_cast<size_t>(shard::kSyncBucketBytes), overlap, layer);
  s_->scaler = LossScaler(cfg_.train.precision == config::Precision::Fp16);
  if (cfg_.train.precision == config::Precision::Bf16) s_->autocast = at::kBFloat16;
  if (cfg_.train.precision == config::Precision::Fp16) s_->autocast = at::kHalf;
  const int64_t global_batch = cfg_.data.batch * cfg_.train.accumulation * mesh_->shape().dp;
  const double peak =
      cfg_.optim.scale_lr ? scaled_lr(cfg_.optim.lr, global_batch, cfg_.optim.base_batch) : cfg_.optim.lr;
  s_->schedule = LrSchedule{peak, cfg_.schedule.warmup_steps, cfg_.schedule.steps, cfg_.schedule.min_lr_ratio};
  s_->task->module().train();
}

Trainer::~Trainer() {
  if (s_->gate) model::WeightGate::close(s_->gate.get());
}

int64_t Trainer::next_step() const { return s_->step; }

std::vector<std::pair<std::string, at::Tensor>> Trainer::named_parameters() const {
  return s_->task->named_parameters();
}

std::string Trainer::device_name() const { return s_->device.str(); }

std::string Trainer::pointwise_summary() const { return s_->pointwise; }

StepResult Trainer::step() {
  StepResult r;
  r.step = s_->step;
  r.lr = s_->schedule.at(s_->step);
  const double comm0 = parallel::comm_wait_seconds();
  const auto t_start = clock_type::now();
  MemoryTracker::reset_peak();
  r.memory_at_start = memory_now().current;
  std::unique_ptr<model::LayerProbe> probe;
  if (std::exchange(s_->keep_timeline, false)) probe = open_probe();
  const std::map<std::string, double> losses = micro_steps(r.time, probe.get());  // this rank's, mean over micro-steps
  // ZeRO: this rank's chunks of the summed gradients (reduce-scattered, the whole ones freed;
  // or all-reduced as without it, then cut); without it every rank holds them whole.
  const bool zero = s_->shards != nullptr;
  const bool zero_grads = config::scatters_gradients(cfg_.parallel.shard_state);
  std::vector<at::Tensor> chunks;
  if (zero_grads) {
    chunks = s_->shards->finish_overlap();  // most buckets went during the last backward
    s_->shards->release_all();              // a block whose backward did not come back for its weights
  } else {
    s_->sync->finish();  // most buckets went during the last backward
    if (zero) chunks = s_->shards->owned_gradients();
  }
  if (probe) probe->mark("gradient sync");
  const auto t_opt = clock_type::now();
  unscale_gradients(chunks);
  // Whole gradients: the same sum on every rank; chunks: this rank's part of it.
  const double local_square_sum = square_sum(gradients(chunks));
  const std::vector<double> agreed = agree(local_square_sum, zero, losses);
  const double square_sum = zero ? agreed[0] : local_square_sum;
  r.grad_norm = std::sqrt(square_sum);
  r.loss_scale = s_->scaler.scale();
  size_t slot = 1;
  for (const auto& [key, value] : losses) r.losses[key] = agreed[slot++] / mesh_->world().size();
  const bool finite_loss = std::isfinite(r.losses.at("loss"));
  const bool finite_grads = zero ? std::isfinite(square_sum) : agreed[0] == 0;
  r.skipped = s_->scaler.update(!finite_grads || !finite_loss);
  if (r.skipped && !s_->scaler.enabled() && cfg_.train.nonfinite == config::NonFinite::Stop)
    r.nonfinite = nonfinite_text(finite_loss ? "the gradient norm" : "loss",
                                 finite_loss ? r.grad_norm : r.losses.at("loss"), r.step);
  if (!r.skipped) {
    clip_gradients(r.grad_norm, chunks);
    if (zero) {
      s_->sharded->step(r.lr, chunks);
      s_->shards->all_gather_parameters();
    } else {
      s_->optim->step(r.lr);
    }
  }
  if (probe) probe->mark("optimizer step");
  chunks.clear();
  zero_gradients();
  const auto t_end = clock_type::now();
  if (probe) s_->timeline = timeline_event(r.step, r.memory_at_start, probe->points());
  r.time.optim_ms = ms(t_opt, t_end);
  r.time.comm_ms = (parallel::comm_wait_seconds() - comm0) * 1e3;
  r.time.total_ms = ms(t_start, t_end);
  r.memory = memory_now();
  const int64_t samples = cfg_.data.batch * cfg_.train.accumulation * mesh_->shape().dp;
  r.samples_per_s = static_cast<double>(samples) / (r.time.total_ms / 1e3);
  ++s_->step;
  return r;
}

std::map<std::string, double> Trainer::micro_steps(StepTimings& time, model::LayerProbe* probe) {
  const int accum = cfg_.train.accumulation;
  std::map<std::string, double> mean;  // per key
  for (int m = 0; m < accum; ++m) {
    const auto t0 = clock_type::now();
    const std::map<std::string, at::Tensor> losses = forward(m);
    const auto t1 = clock_type::now();
    if (probe && m == 0) probe->begin_backward();
    // ZeRO's gradients stage: the last micro-step's backward reduce-scatters each bucket as
    // soon as its gradients are complete (earlier ones accumulate whole gradients).
    // Otherwise it starts each bucket's all-reduce the same way.
    if (m == accum - 1 && config::scatters_gradients(cfg_.parallel.shard_state))
      s_->shards->arm_overlap();
    else if (m == accum - 1)
      s_->sync->arm();
    (losses.at("loss") * (s_->scaler.scale() / accum)).backward();
    if (probe && m == 0) probe->end_backward();  // the layers report no more: one micro-step is the timeline
    if (probe && m == accum - 1 && accum > 1) probe->mark(fmt::format("micro-steps 2..{}", accum));
    const auto t2 = clock_type::now();
    time.forward_ms += ms(t0, t1);
    time.backward_ms += ms(t1, t2);
    for (const auto& [key, value] : losses) mean[key] += value.item<double>() / accum;
  }
  return mean;
}

std::map<std::string, at::Tensor> Trainer::forward(int micro) {
  const int64_t n = s_->step * cfg_.train.accumulation + micro;  // micro-steps before this one
  torch::manual_seed(cfg_.train.seed * 1000003ULL + static_cast<uint64_t>(n * 4099) +
                     static_cast<uint64_t>(mesh_->dp_index()));
  const int64_t first = (n * mesh_->shape().dp + mesh_->dp_index()) * cfg_.data.batch;
  const model::AutocastScope autocast(s_->device.type(), s_->autocast != at::kFloat, s_->autocast);
  return s_->task->losses(first, cfg_.data.batch, mesh_->sp_ptr());
}

std::vector<at::Tensor> Trainer::gradients(std::vector<at::Tensor>& chunks) const {
  if (!chunks.empty()) return chunks;
  std::vector<at::Tensor> out;
  for (auto& [name, p] : named_parameters())
    if (p.grad().defined()) out.push_back(p.mutable_grad());
  return out;
}

void Trainer::unscale_gradients(std::vector<at::Tensor>& chunks) {
  if (!s_->scaler.enabled()) return;
  const std::vector<at::Tensor> grads = gradients(chunks);
  if (!grads.empty()) at::_foreach_div_(grads, s_->scaler.scale());
}

void Trainer::zero_gradients() {
  if (s_->optim) return s_->optim->zero_grad();
  for (auto& [name, p] : named_parameters()) p.mutable_grad().reset();  // ZeRO's gradients stage dropped them already
}

std::vector<double> Trainer::agree(double square_sum, bool summed, const std::map<std::string, double>& losses) const {
  std::vector<double> values{summed ? square_sum : (std::isfinite(square_sum) ? 0.0 : 1.0)};
  for (const auto& [key, value] : losses) values.push_back(value);  // same key order on every rank
  at::Tensor sums = torch::tensor(values, torch::kFloat64);
  mesh_->world().all_reduce_sum(sums);
  return {sums.data_ptr<double>(), sums.data_ptr<double>() + sums.numel()};
}

void Trainer::clip_gradients(double norm, std::vector<at::Tensor>& chunks) {
  if (cfg_.optim.grad_clip <= 0 || norm <= cfg_.optim.grad_clip) return;
  const double f = cfg_.optim.grad_clip / (norm + 1e-6);
  const std::vector<at::Tensor> grads = gradients(chunks);
  if (!grads.empty()) at::_foreach_mul_(grads, f);  // one call; the same products as mul_ on each
}

std::unique_ptr<model::LayerProbe> Trainer::open_probe() const {
  if (s_->device.is_cuda()) {  // the caching allocator's allocated bytes; its peak is the step's
    const int index = s_->device.index();
    return std::make_unique<model::LayerProbe>([index] {
      const int64_t now = MemoryTracker::cuda(index).current;
      return model::LayerProbe::Reading{now, now};
    });
  }
  return std::make_unique<model::LayerProbe>([] {
    return model::LayerProbe::Reading{MemoryTracker::cpu().current, MemoryTracker::take_window_high()};
  });
}

protocol::MemoryTimelineEvent Trainer::timeline_event(int64_t step, int64_t start,
                                                      const std::vector<model::ProbePoint>& points) const {
  protocol::MemoryTimelineEvent e{mesh_->rank(), step, start, s_->device.is_cuda() ? "cuda" : "cpu", {}};
  for (const model::ProbePoint& p : points) e.points.push_back({p.where, p.high, p.after});
  return e;
}

void Trainer::keep_timeline() { s_->keep_timeline = true; }

std::optional<protocol::MemoryTimelineEvent> Trainer::take_timeline() { return std::exchange(s_->timeline, {}); }

MemorySample Trainer::memory_now() const {
  return s_->device.is_cuda() ? MemoryTracker::cuda(s_->device.index()) : MemoryTracker::cpu();
}

OpenLaneEvaluation Trainer::evaluate() {
  std::optional<OpenLaneEvaluation> e = s_->task->evaluate(mesh_->sp_ptr(), mesh_->rank() == 0);
  if (!e) throw util::Error("train.eval_every needs task openlanev2", "set train.eval_every to 0");
  return std::move(*e);
}

std::vector<std::pair<std::string, at::Tensor>> Trainer::optimizer_state() const {
  return s_->optim ? s_->optim->state() : s_->sharded->state();
}

void Trainer::save_checkpoint(const std::string& path) const {
  // Whole tensors whatever the layout, so that a run resumes under another one: ZeRO's chunks
  // are gathered (every rank takes part), then rank 0 writes.
  const auto optim = optimizer_state();
  const auto whole = s_->whole_weights();  // ZeRO's weights stage: every block's weights, while saving
  if (mesh_->rank() != 0) return;
  torch::serialize::OutputArchive ar;
  // Parameters and buffers (BatchNorm's running statistics) under their module names.
  for (const auto& [name, t] : model::state_dict(s_->task->module())) ar.write("model/" + name, t.detach().cpu());
  for (auto& [name, t] : optim) ar.write("optim/" + name, t.cpu());
  ar.write("meta/step", torch::tensor(s_->step, torch::kInt64));
  ar.write("meta/loss_scale", torch::tensor(s_->scaler.scale(), torch::kFloat64));
  ar.write("meta/scaler_good_steps", torch::tensor(s_->scaler.good_steps(), torch::kInt64));
  ar.write("meta/config", c10::IValue(to_json(cfg_).dump()));
  // Streamed into a temporary file renamed over `path` only when complete: a failed write
  // (disk full, EFBIG) leaves every earlier checkpoint as it was.
  io::AtomicFile file(path);
  // A checkpoint is the run's largest file: it stops short of the last MiB, which the events
  // and the history appended while it is written (and its own error event) still need.
  file.keep_free(size_t{1} << 20);
  std::optional<util::Error> failed;
  ar.save_to([&](const void* data, size_t n) -> size_t {
    if (failed) return n;  // the zip writer finishes; its bytes are dropped and nothing is committed
    try {
      file.write(data, n);
    } catch (const util::Error& e) {
      failed = e;
    }
    return n;
  });
  if (failed)
    throw util::Error(fmt::format("checkpoint {} was not saved: {}", path, failed->problem()),
                      "free disk space in the run folder; checkpoints written before this one, if any, are as they "
                      "were (see <run folder>/checkpoints; `halo launch --resume <run folder>` takes the latest)");
  file.commit();
}

void Trainer::load_checkpoint(const std::string& path) {
  torch::serialize::InputArchive ar;
  io::load_torch_archive(path, ar);
  torch::NoGradGuard no_grad;
  {
    const auto whole = s_->whole_weights();  // written whole, kept as this rank's chunks
    load_model_tensors(s_->task->module(), ar, path);
  }
  std::map<std::string, at::Tensor> state;
  for (const auto& [name, p] : named_parameters())
    for (const char* slot : {"exp_avg", "exp_avg_sq", "momentum_buffer"}) {
      at::Tensor v;
      if (ar.try_read(fmt::format("optim/{}.{}", name, slot), v)) state[name + "." + slot] = v.to(p.device());
    }
  if (at::Tensor v; ar.try_read("optim/__step__", v)) state["__step__"] = v;
  if (s_->optim)
    s_->optim->load_state(state);
  else
    s_->sharded->load_state(state);
  at::Tensor step, scale, good;
  ar.read("meta/step", step);
  ar.read("meta/loss_scale", scale);
  ar.read("meta/scaler_good_steps", good);
  s_->step = step.item<int64_t>();
  s_->scaler.restore(scale.item<double>(), good.item<int64_t>());
}

PretrainedResult Trainer::load_pretrained() {
  const auto whole = s_->whole_weights();
  torch::nn::Module& m = s_->task->module();
  return train::load_pretrained(m, cfg_.model.pretrained, cfg_.model.pretrained_skip,
                                backbone_prefix(m, *s_->backbone));
}

void Trainer::keep_preview() { s_->task->keep_preview(); }

int Trainer::write_preview(const std::string& run_dir) {
  const std::optional<at::Tensor> views = s_->task->take_preview();  // (V, 3, h, w/sp) uint8
  if (!views) return 0;
  const int rank = mesh_->sp_index();
  for (int64_t v = 0; v < views->size(0); ++v)
    data::write_preview_png((*views)[v],
                            std::filesystem::path(run_dir) / protocol::preview_file(static_cast<int>(v), rank));
  return static_cast<int>(views->size(0));
}

protocol::LayoutEvent Trainer::layout_event() const {
  const int sp = mesh_->shape().sp;
  const int64_t images = cfg_.data.batch * cfg_.data.views;
  const int64_t bytes_per = config::compute_bytes(cfg_.train.precision);
  protocol::LayoutEvent e;
  e.input = {images, 3, cfg_.data.height, cfg_.data.width};
  e.sp = sp;
  e.dp = mesh_->shape().dp;
  const arch::LayerList& layers = s_->backbone->layers();
  const std::vector<arch::LayerShape> shapes = s_->backbone->layout(cfg_.data.height, cfg_.data.width, sp);
  for (const arch::LayerShape& l : shapes) {
    const arch::Layer& layer = layers[l.layer];
    e.layers.push_back(striped_row(
        {l.name, l.window, l.in, l.out, layer.in_channels, l.in_height, l.channels, l.height}, images, bytes_per));
  }
  for (protocol::LayoutLayer& row : s_->task->layout_tail(shapes, images, bytes_per))
    e.layers.push_back(std::move(row));
  return e;
}

}  // namespace halo::train
