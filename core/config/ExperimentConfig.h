// The experiment file of `halo launch EXPERIMENT.json [--set key=value ...]`: typed config
// with defaults, parsing that reports every problem at once, --set overrides, JSON out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/Enums.h"

namespace halo::config {

struct ModelConfig {
  std::string arch = "convnext_atto";
  int64_t num_classes = 10;
  double drop_path = 0.0;
  int64_t dim = 128;  // openlanev2: feature width of the neck, BEV and heads (_dim_ of the baseline)
  // A safetensors or torch file of timm-named weights to start from ("": random init); a
  // resumed run takes its checkpoint's weights instead. Keys starting with a prefix of
  // pretrained_skip are not loaded (JSON: a list, or one string of comma-separated prefixes).
  std::string pretrained;
  std::vector<std::string> pretrained_skip;
  bool operator==(const ModelConfig&) const = default;
};

// openlanev2: the seven loss weights (defaults: the OpenLane-V2 baseline config).
struct LossConfig {
  double lc_cls = 1.0, lc_bbox = 2.5, te_cls = 1.0, te_bbox = 2.5, te_iou = 1.0, lclc = 2.0, lcte = 2.0;
  bool operator==(const LossConfig&) const = default;
};

struct DataConfig {
  DataSource source = DataSource::Synthetic;
  std::string root;  // required for openlanev2
  int64_t views = 7;
  int64_t height = 64;
  int64_t width = 256;
  int64_t batch = 1;  // samples per dp group per micro-step
  int workers = 2;
  EvalSplit eval_split = EvalSplit::Val;  // train.eval_every scores the model on <root>/<eval_split>
  bool operator==(const DataConfig&) const = default;
};

struct ParallelConfig {
  Strategy strategy = Strategy::Tp;
  int sp = 2;
  int dp = 1;
  CheckpointLevel checkpoint_level = CheckpointLevel::Block;
  Backend backend = Backend::Auto;
  Device device = Device::Cpu;
  int threads_per_rank = 1;
  ShardState shard_state = ShardState::None;  // ZeRO stage over the world
  Recompute recompute = Recompute::Cheap;     // save less per block, recompute the cheap ops
  Pointwise pointwise = Pointwise::Cpu;       // MKL's GEMM or oneDNN for the blocks' 1x1 products (CPU)
  bool operator==(const ParallelConfig&) const = default;
};

struct OptimConfig {
  OptimizerKind name = OptimizerKind::AdamW;
  double lr = 1e-3;
  double weight_decay = 0.05;
  double momentum = 0.9;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double grad_clip = 1.0;  // 0 = off
  bool scale_lr = false;   // lr * global batch / base_batch
  int64_t base_batch = 256;
  bool operator==(const OptimConfig&) const = default;
};

struct ScheduleConfig {
  int64_t steps = 50;
  int64_t warmup_steps = 5;
  double min_lr_ratio = 0.01;
  bool operator==(const ScheduleConfig&) const = default;
};

struct TrainConfig {
  int accumulation = 1;
  Precision precision = Precision::Fp32;
  uint64_t seed = 0;
  int log_every = 1;
  int checkpoint_every = 0;  // 0 = only at the end
  int eval_every = 0;
  NonFinite nonfinite = NonFinite::Stop;  // a NaN/inf loss or gradient without the fp16 loss scaler
  bool operator==(const TrainConfig&) const = default;
};

struct ExperimentConfig {
  std::string name = "experiment";
  Task task = Task::Convnext;
  std::string run_dir;  // empty: runs/<name>-<timestamp> chosen by the launcher
  ModelConfig model;
  LossConfig loss;
  DataConfig data;
  ParallelConfig parallel;
  OptimConfig optim;
  ScheduleConfig schedule;
  TrainConfig train;
  int world_size() const { return parallel.sp * parallel.dp; }
  bool operator==(const ExperimentConfig&) const = default;
};

// One invalid setting. field: dotted path ("optim.lr"; "" for the top level);
// value: the value as written (JSON text); fix: what to write instead.
struct ConfigProblem {
  std::string field;
  std::string value;
  std::string fix;
};

struct ConfigResult {
  ExperimentConfig config;  // defaults where a setting was missing or had a problem
  std::vector<ConfigProblem> problems;
  std::vector<std::string> warnings;  // unknown keys (ignored), with the closest known key
  std::vector<std::string> unknown;   // those keys' dotted paths, one per warning, in the same order
};

// Parses + validates; never throws for bad content (problems are collected).
ConfigResult parse_experiment(const nlohmann::json& j);

// Applies "a.b.c=value" (value parsed as JSON if it parses, else taken as a string) to j,
// creating missing objects; util::Error on malformed text or a path through a non-object.
void apply_override(nlohmann::json& j, const std::string& assignment);

// Experiment files are small (a hostile 1 MiB string still reads as one clear problem); a longer
// one (e.g. /dev/zero) is refused after this many bytes.
constexpr size_t kMaxExperimentBytes = 4 << 20;

// Parses JSON text as an experiment file is read: util::Error (naming `what`) for invalid
// JSON, a number out of range, or a key that appears twice in one object (JSON readers differ
// on which copy wins, so Halo takes neither).
nlohmann::json parse_json_strict(const std::string& text, const std::string& what);

// Reads the file (errors name the path: missing, unreadable, over kMaxExperimentBytes, not JSON
// with line/column, duplicate keys), applies overrides in order, parses; throws util::Error
// listing every problem ("  - field: value: fix" lines) when there are problems, and when an
// override names an unknown key (with the likely key). Warnings (unknown keys in the file) go
// to *warnings.
ExperimentConfig load_experiment(const std::string& path, const std::vector<std::string>& overrides,
                                 std::vector<std::string>* warnings = nullptr);

// The full config, every field; parse_experiment(to_json(c)) round-trips.
nlohmann::json to_json(const ExperimentConfig& c);

// "  - field: value: fix" per problem, newline-separated.
std::string describe_problems(const std::vector<ConfigProblem>& p);

}  // namespace halo::config
