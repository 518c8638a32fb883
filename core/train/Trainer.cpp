// One optimizer step = `accumulation` micro-steps (forward, backward, no communication but
// halos), then one gradient sync, unscale, agreed overflow check, global-norm clip, update.
// Randomness is a function of (seed, step, micro-step, dp group): resume replays exactly.
#include "train/Trainer.h"

#include <chrono>
#include <filesystem>
#include <optional>

#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>
#ifdef HALO_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "io/AtomicFile.h"
#include "io/TorchArchive.h"
#include "model/ConvNeXt.h"
#include "parallel/GradSync.h"
#include "parallel/Mesh.h"
#include "parallel/ShardedTensor.h"
#include "shard/HaloPlan.h"
#include "train/LossScaler.h"
#include "train/LrSchedule.h"
#include "train/OpenLaneTask.h"
#include "train/Optimizer.h"
#include "train/SyntheticTask.h"
#include "util/Error.h"

namespace halo::train {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {
double ms(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

struct Trainer::State {
  torch::Device device{torch::kCPU};
  model::ConvNeXt model{nullptr};     // task convnext
  std::unique_ptr<OpenLaneTask> ol;   // task openlanev2
  model::ConvNeXt backbone{nullptr};  // the sharded part: model, or ol's img_backbone
  torch::nn::Module* net = nullptr;   // what trains
  std::unique_ptr<Optimizer> optim;
  std::unique_ptr<parallel::GradSync> sync;
  std::unique_ptr<SyntheticTask> task;
  LossScaler scaler{false};
  LrSchedule schedule;
  at::ScalarType autocast = at::kFloat;
  int64_t step = 0;
};

Trainer::Trainer(const config::ExperimentConfig& cfg, std::shared_ptr<parallel::Mesh> mesh)
    : cfg_(cfg), mesh_(std::move(mesh)), s_(std::make_unique<State>()) {
  auto variant = arch::find_convnext_variant(cfg_.model.arch);
  if (!variant && cfg_.task != config::Task::OpenLaneV2)
    throw util::Error(fmt::format("model.arch '{}' is unknown", cfg_.model.arch),
                      "choose one of: " + arch::convnext_variant_names());
  if (cfg_.parallel.device == config::Device::Cuda) {
#ifdef HALO_WITH_CUDA
    const int n = c10::cuda::device_count();
    if (n == 0) throw util::Error("parallel.device is cuda but no GPU is visible", "set parallel.device to cpu");
    s_->device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(mesh_->rank() % n));
#else
    throw util::Error("parallel.device is cuda but this Halo was built without CUDA", "set parallel.device to cpu");
#endif
  }
  torch::manual_seed(cfg_.train.seed);  // identical initial weights on every rank
  if (cfg_.task == config::Task::OpenLaneV2) {
    s_->ol = std::make_unique<OpenLaneTask>(cfg_, s_->device, *mesh_);
    s_->backbone = s_->ol->net()->img_backbone;
    s_->net = s_->ol->net().ptr().get();
  } else {
    s_->model = model::ConvNeXt(*variant, cfg_.model.num_classes, 3, cfg_.model.drop_path);
    s_->model->to(s_->device);
    s_->backbone = s_->model;
    s_->net = s_->model.ptr().get();
  }
  const bool ckpt = config::checkpoints(cfg_.parallel.strategy);
  if (ckpt)
    s_->backbone->set_checkpoint(cfg_.parallel.checkpoint_level == config::CheckpointLevel::Stage
                                     ? model::CheckpointLevel::Stage
                                     : model::CheckpointLevel::Block);
  shard::check_shardable(s_->backbone->layer_windows(), cfg_.data.width, mesh_->shape().sp);
  auto params = named_parameters();
  s_->optim = std::make_unique<Optimizer>(
      params, OptimizerOptions{cfg_.optim.name, cfg_.optim.weight_decay, cfg_.optim.momentum, cfg_.optim.beta1,
                               cfg_.optim.beta2, cfg_.optim.eps});
  if (s_->ol) {
    s_->sync = std::make_unique<parallel::GradSync>(params, model::OpenLaneBaselineImpl::placement, mesh_);
  } else {
    s_->sync = std::make_unique<parallel::GradSync>(params, model::ConvNeXtImpl::placement, mesh_);
    s_->task = std::make_unique<SyntheticTask>(cfg_.data.views, cfg_.data.height, cfg_.data.width,
                                               cfg_.model.num_classes, cfg_.train.seed);
  }
  s_->scaler = LossScaler(cfg_.train.precision == config::Precision::Fp16);
  if (cfg_.train.precision == config::Precision::Bf16) s_->autocast = at::kBFloat16;
  if (cfg_.train.precision == config::Precision::Fp16) s_->autocast = at::kHalf;
  const int64_t global_batch = cfg_.data.batch * cfg_.train.accumulation * mesh_->shape().dp;
  const double peak =
      cfg_.optim.scale_lr ? scaled_lr(cfg_.optim.lr, global_batch, cfg_.optim.base_batch) : cfg_.optim.lr;
  s_->schedule = LrSchedule{peak, cfg_.schedule.warmup_steps, cfg_.schedule.steps, cfg_.schedule.min_lr_ratio};
  s_->net->train();
}

Trainer::~Trainer() = default;

int64_t Trainer::next_step() const { return s_->step; }

std::vector<std::pair<std::string, at::Tensor>> Trainer::named_parameters() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (auto& p : s_->net->named_parameters()) out.emplace_back(p.key(), p.value());
  return out;
}

std::string Trainer::device_name() const { return s_->device.str(); }

StepResult Trainer::step() {
  StepResult r;
  r.step = s_->step;
  r.lr = s_->schedule.at(s_->step);
  const int accum = cfg_.train.accumulation;
  const int64_t N = cfg_.data.batch, V = cfg_.data.views;
  const double comm0 = parallel::comm_wait_seconds();
  const auto t_start = clock_type::now();
  MemoryTracker::reset_peak();
  r.memory_at_start = (s_->device.is_cuda() ? MemoryTracker::cuda(s_->device.index()) : MemoryTracker::cpu()).current;
  const auto dev_type = s_->device.type();
  std::map<std::string, double> loss_sum;  // per key, mean over micro-steps
  for (int m = 0; m < accum; ++m) {
    torch::manual_seed(cfg_.train.seed * 1000003ULL + static_cast<uint64_t>((s_->step * accum + m) * 4099) +
                       static_cast<uint64_t>(mesh_->dp_index()));
    const int64_t first = ((s_->step * accum + m) * mesh_->shape().dp + mesh_->dp_index()) * N;
    const auto t0 = clock_type::now();
    std::map<std::string, at::Tensor> losses;
    {
      const bool ac = s_->autocast != at::kFloat;
      const bool prev = at::autocast::is_autocast_enabled(dev_type);
      at::autocast::set_autocast_enabled(dev_type, ac);
      if (ac) at::autocast::set_autocast_dtype(dev_type, s_->autocast);
      if (s_->ol) {
        losses = s_->ol->losses(first, N, mesh_->sp_ptr());
      } else {
        SyntheticSample b = s_->task->batch(first, N);
        at::Tensor images = b.images.view({N * V, 3, cfg_.data.height, cfg_.data.width}).to(s_->device);
        parallel::ShardedTensor x = parallel::shard_evenly(images, mesh_->sp_ptr());        // (N*V, 3, H, W/sp)
        at::Tensor logits = s_->model->forward(x).view({N, V, -1}).mean(1).to(at::kFloat);  // (N, classes)
        losses["loss"] = torch::cross_entropy_loss(logits, b.labels.to(s_->device));
      }
      at::autocast::set_autocast_enabled(dev_type, prev);
      at::autocast::clear_cache();
    }
    at::Tensor loss = losses.at("loss");
    const auto t1 = clock_type::now();
    (loss * (s_->scaler.scale() / accum)).backward();
    const auto t2 = clock_type::now();
    r.time.forward_ms += ms(t0, t1);
    r.time.backward_ms += ms(t1, t2);
    for (const auto& [key, value] : losses) loss_sum[key] += value.item<double>() / accum;
  }
  s_->sync->sync();
  const auto t_opt = clock_type::now();
  // Unscale, agree on overflow, clip on the (identical after sync) global norm, update.
  double sq = 0;
  for (auto& [name, p] : named_parameters())
    if (p.grad().defined()) {
      if (s_->scaler.enabled()) p.mutable_grad().div_(s_->scaler.scale());
      sq += p.grad().to(at::kDouble).pow(2).sum().item<double>();
    }
  std::vector<double> values{std::isfinite(sq) ? 0.0 : 1.0};
  for (const auto& [key, value] : loss_sum) values.push_back(value);  // same key order on every rank
  at::Tensor flags = torch::tensor(values, torch::kFloat64);
  mesh_->world().all_reduce_sum(flags);
  r.grad_norm = std::sqrt(sq);
  r.loss_scale = s_->scaler.scale();
  r.skipped = s_->scaler.update(flags[0].item<double>() > 0);
  if (!r.skipped) {
    if (cfg_.optim.grad_clip > 0 && r.grad_norm > cfg_.optim.grad_clip) {
      const double f = cfg_.optim.grad_clip / (r.grad_norm + 1e-6);
      for (auto& [name, p] : named_parameters())
        if (p.grad().defined()) p.mutable_grad().mul_(f);
    }
    s_->optim->step(r.lr);
  }
  s_->optim->zero_grad();
  const auto t_end = clock_type::now();
  int64_t slot = 1;
  for (const auto& [key, value] : loss_sum) r.losses[key] = flags[slot++].item<double>() / mesh_->world().size();
  r.time.optim_ms = ms(t_opt, t_end);
  r.time.comm_ms = (parallel::comm_wait_seconds() - comm0) * 1e3;
  r.time.total_ms = ms(t_start, t_end);
  r.memory = s_->device.is_cuda() ? MemoryTracker::cuda(s_->device.index()) : MemoryTracker::cpu();
  r.samples_per_s = static_cast<double>(N * accum * mesh_->shape().dp) / (r.time.total_ms / 1e3);
  ++s_->step;
  return r;
}

OpenLaneEvaluation Trainer::evaluate() {
  if (!s_->ol) throw util::Error("train.eval_every needs task openlanev2", "set train.eval_every to 0");
  return s_->ol->evaluate(mesh_->sp_ptr(), mesh_->rank() == 0);
}

void Trainer::save_checkpoint(const std::string& path) const {
  torch::serialize::OutputArchive ar;
  for (auto& [name, p] : named_parameters()) ar.write("model/" + name, p.detach().cpu());
  for (auto& [name, t] : s_->optim->state()) ar.write("optim/" + name, t.cpu());
  ar.write("meta/step", torch::tensor(s_->step, torch::kInt64));
  ar.write("meta/loss_scale", torch::tensor(s_->scaler.scale(), torch::kFloat64));
  ar.write("meta/scaler_good_steps", torch::tensor(s_->scaler.good_steps(), torch::kInt64));
  ar.write("meta/config", c10::IValue(to_json(cfg_).dump()));
  // Streamed into a temporary file renamed over `path` only when complete: a failed write
  // (disk full, EFBIG) leaves every earlier checkpoint as it was.
  io::AtomicFile file(path);
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
                      "free disk space in the run folder; the previous checkpoint is intact, resume from it with "
                      "`halo launch --resume <run folder>`");
  file.commit();
}

void Trainer::load_checkpoint(const std::string& path) {
  torch::serialize::InputArchive ar;
  io::load_torch_archive(path, ar);
  torch::NoGradGuard no_grad;
  for (auto& [name, p] : named_parameters()) {
    at::Tensor t;
    if (!ar.try_read("model/" + name, t) || t.sizes() != p.sizes())
      throw util::Error(fmt::format("checkpoint {} has no tensor '{}' of shape {}", path, name, c10::str(p.sizes())),
                        "resume with the experiment the checkpoint was written with");
    p.copy_(t);
  }
  std::map<std::string, at::Tensor> state;
  for (auto& [key, t] : s_->optim->state()) {
    at::Tensor v;
    if (ar.try_read("optim/" + key, v)) state[key] = v.to(t.device());
  }
  s_->optim->load_state(state);
  at::Tensor step, scale, good;
  ar.read("meta/step", step);
  ar.read("meta/loss_scale", scale);
  ar.read("meta/scaler_good_steps", good);
  s_->step = step.item<int64_t>();
  s_->scaler.restore(scale.item<double>(), good.item<int64_t>());
}

protocol::LayoutEvent Trainer::layout_event() const {
  const int sp = mesh_->shape().sp;
  const int64_t images = cfg_.data.batch * cfg_.data.views;
  const int64_t bytes_per = config::compute_bytes(cfg_.train.precision);
  protocol::LayoutEvent e;
  e.input = {images, 3, cfg_.data.height, cfg_.data.width};
  e.sp = sp;
  e.dp = mesh_->shape().dp;
  for (const auto& l : s_->backbone->layout(cfg_.data.height, cfg_.data.width, sp)) {
    protocol::LayoutLayer layer{l.name, l.window.kernel, l.window.stride, l.window.padding, l.window.dilation, {}};
    for (int r = 0; r < sp; ++r) {
      const shard::HaloPlan plan = shard::make_halo_plan(l.in, l.window, r, l.name.c_str());
      const auto [left, right] = plan.peer_columns();
      const int64_t w = l.out.span(r).size();
      layer.ranks.push_back({r,
                             {l.in.span(r).begin, l.in.span(r).end},
                             {l.out.span(r).begin, l.out.span(r).end},
                             {images, l.channels, l.height, w},
                             left,
                             right,
                             images * l.channels * l.height * w * bytes_per});
    }
    e.layers.push_back(std::move(layer));
  }
  return e;
}

}  // namespace halo::train
