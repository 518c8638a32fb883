// The training loop of one rank over a TrainTask (classification or OpenLane-V2) on a dp x sp mesh
// with any memory strategy, accumulation, mixed precision, clipping, schedule; checkpoints.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "config/ExperimentConfig.h"
#include "protocol/LayoutEvent.h"
#include "protocol/MemoryTimelineEvent.h"
#include "train/MemoryTracker.h"
#include "train/Pretrained.h"

namespace halo::parallel {
class Mesh;
}
namespace halo::model {
class LayerProbe;
struct ProbePoint;
}  // namespace halo::model

namespace halo::train {

struct OpenLaneEvaluation;

struct StepTimings {
  double forward_ms = 0, backward_ms = 0, comm_ms = 0, optim_ms = 0, total_ms = 0;
};

struct StepResult {
  int64_t step = 0;                      // the step just taken (0-based)
  std::map<std::string, double> losses;  // "loss" and the task's terms (means over dp groups)
  double lr = 0, grad_norm = 0, loss_scale = 1;
  bool skipped = false;  // non-finite gradients or loss: no update (agreed by all ranks)
  // train.nonfinite=stop (and no fp16 loss scaler): "loss became NaN at step N" when this
  // step's loss or gradient norm is not finite; the worker reports the step, then stops.
  std::string nonfinite;
  StepTimings time;
  MemorySample memory;
  int64_t memory_at_start = 0;  // live bytes when the step began (weights, optimizer state)
  double samples_per_s = 0;     // global samples per second
};

class Trainer {
 public:
  Trainer(const config::ExperimentConfig& cfg, std::shared_ptr<parallel::Mesh> mesh);
  ~Trainer();

  StepResult step();
  int64_t next_step() const;
  bool finished() const { return next_step() >= cfg_.schedule.steps; }

  // A task with an evaluation (openlanev2 with train.eval_every > 0), on every rank together:
  // scores the model on data.eval_split (see OpenLaneTask::evaluate); rank 0 holds the scores.
  OpenLaneEvaluation evaluate();

  // Resume checkpoints (weights, optimizer, scaler, step): temp file + rename. Every rank calls
  // it (ZeRO's sharded optimizer state is gathered into whole tensors); world rank 0 writes,
  // and every rank can read, under any parallel layout.
  void save_checkpoint(const std::string& path) const;
  void load_checkpoint(const std::string& path);
  // model.pretrained into the model, before the first step of a new run (a resumed run takes
  // its checkpoint's weights): util::Error listing every mismatch, nothing copied then.
  PretrainedResult load_pretrained();

  protocol::LayoutEvent layout_event() const;  // per layer: shape on each rank, halos, activation bytes
  // The layout view's pictures: after keep_preview(), the next step keeps this rank's stripe
  // of its first sample's views, and write_preview() writes each as run_dir /
  // protocol::preview_file(view, sp index) (util::Error naming the file when it cannot).
  // Returns the number of files written: 0 when nothing was kept.
  void keep_preview();
  // The memory tab's measured timeline: after keep_timeline(), the next step is probed (live
  // bytes after every layer of its first micro-step's forward and backward, the gradient sync,
  // the optimizer step) and take_timeline() then returns it, once.
  void keep_timeline();
  std::optional<protocol::MemoryTimelineEvent> take_timeline();
  int write_preview(const std::string& run_dir);
  std::string device_name() const;
  // The ConvNeXt blocks' per-pixel kernels (parallel.pointwise) and why: "onednn (cpu: AMD,
  // AVX-512)", "gemm (auto, probe: gemm 2.10 ms, onednn 2.31 ms)"; "" without such blocks.
  std::string pointwise_summary() const;
  // Named parameters (timm names) for export.
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const;

 private:
  // The phases of step(), in order.
  // This rank's losses, mean over micro-steps; the probe (when given) sees the first one.
  std::map<std::string, double> micro_steps(StepTimings& time, model::LayerProbe* probe);
  std::map<std::string, at::Tensor> forward(int micro);  // micro-step `micro`: seed, batch, autocast
  // The gradients the step works on: ZeRO's chunks when given, else every parameter's whole one.
  std::vector<at::Tensor> gradients(std::vector<at::Tensor>& chunks) const;
  void unscale_gradients(std::vector<at::Tensor>& chunks);            // divide by the loss scale
  void clip_gradients(double norm, std::vector<at::Tensor>& chunks);  // to optim.grad_clip
  void zero_gradients();  // whole gradients kept at zero; ZeRO's gradients stage has dropped them
  // World sums of [non-finite gradient flag, or (summed) this rank's squared gradient sum;
  // losses by key]: every rank agrees on all of them.
  std::vector<double> agree(double square_sum, bool summed, const std::map<std::string, double>& losses) const;
  MemorySample memory_now() const;
  // "<param>.<slot>" and "__step__" whole tensors, from either optimizer (a collective with ZeRO).
  std::vector<std::pair<std::string, at::Tensor>> optimizer_state() const;
  std::unique_ptr<model::LayerProbe> open_probe() const;  // reading this device's live bytes
  protocol::MemoryTimelineEvent timeline_event(int64_t step, int64_t start,
                                               const std::vector<model::ProbePoint>& points) const;

  struct State;
  config::ExperimentConfig cfg_;
  std::shared_ptr<parallel::Mesh> mesh_;
  std::unique_ptr<State> s_;
};

}  // namespace halo::train
