// The training loop of one rank: multi-view ConvNeXt classification or the OpenLane-V2 baseline on
// a dp x sp mesh with any memory strategy, accumulation, mixed precision, clipping, schedule; checkpoints.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "config/ExperimentConfig.h"
#include "protocol/LayoutEvent.h"
#include "train/MemoryTracker.h"

namespace halo::parallel {
class Mesh;
}

namespace halo::train {

struct OpenLaneEvaluation;

struct StepTimings {
  double forward_ms = 0, backward_ms = 0, comm_ms = 0, optim_ms = 0, total_ms = 0;
};

struct StepResult {
  int64_t step = 0;                      // the step just taken (0-based)
  std::map<std::string, double> losses;  // "loss" and the task's terms (means over dp groups)
  double lr = 0, grad_norm = 0, loss_scale = 1;
  bool skipped = false;  // non-finite gradients: no update (agreed by all ranks)
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

  // Resume checkpoints (weights, optimizer, scaler, step): temp file + rename. Every rank
  // holds identical state, so rank 0 writes and every rank can read.
  // Task openlanev2 with train.eval_every > 0, on every rank together: scores the model on
  // data.eval_split (see OpenLaneTask::evaluate); the scores and predictions are rank 0's.
  OpenLaneEvaluation evaluate();

  void save_checkpoint(const std::string& path) const;
  void load_checkpoint(const std::string& path);

  protocol::LayoutEvent layout_event() const;  // per layer: shape on each rank, halos, activation bytes
  std::string device_name() const;
  // Named parameters (timm names) for export.
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const;

 private:
  struct State;
  config::ExperimentConfig cfg_;
  std::shared_ptr<parallel::Mesh> mesh_;
  std::unique_ptr<State> s_;
};

}  // namespace halo::train
