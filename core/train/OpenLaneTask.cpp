// Model options from the experiment (backbone variant, model.dim, the loss.* weights); the
// outputs go to float32 before the losses so mixed precision only touches the network.
#include "train/OpenLaneTask.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "data/FrameReader.h"
#include "data/MultiViewLoader.h"
#include "data/SynthStream.h"
#include "parallel/Mesh.h"
#include "train/LayoutRows.h"
#include "train/OpenLanePredictor.h"
#include "util/Error.h"

namespace halo::train {

namespace {

model::OpenLaneBaselineOptions options(const config::ExperimentConfig& cfg) {
  model::OpenLaneBaselineOptions o;
  o.dim = cfg.model.dim;
  o.ffn = 4 * cfg.model.dim;
  if (o.dim % o.heads != 0)
    throw util::Error(fmt::format("model.dim {} is not a multiple of the {} attention heads", o.dim, o.heads),
                      "set model.dim to a multiple of 8 (the baseline uses 128)");
  return o;
}

// The backbone's name, once the input tiles its stride-32 map (an unknown name fails in
// model::make_backbone, with the choices).
const std::string& backbone_name(const config::ExperimentConfig& cfg) {
  if (cfg.data.height % 32 != 0 || cfg.data.width % (32 * cfg.parallel.sp) != 0)
    throw util::Error(fmt::format("data.height {} / data.width {} do not tile the stride-32 map over sp = {}",
                                  cfg.data.height, cfg.data.width, cfg.parallel.sp),
                      fmt::format("use a height that is a multiple of 32 and a width that is a multiple of {}",
                                  32 * cfg.parallel.sp));
  return cfg.model.arch;
}

model::OpenLaneOutputs to_float(model::OpenLaneOutputs o) {
  for (at::Tensor* t : {&o.lane_logits, &o.lane_control, &o.lane_points, &o.lane_embed, &o.te_logits, &o.te_boxes,
                        &o.te_embed, &o.lclc_logits, &o.lcte_logits})
    *t = t->to(torch::kFloat32);
  return o;
}

// The pipeline's labels as the loss wants them: boxes to (cx, cy, w, h) over the front view's size.
std::vector<model::OpenLaneTargets> targets_of(const data::FrameBatch& b) {
  if (b.targets.size() != b.keys.size())
    throw util::Error("the openlanev2 task trains on labelled frames, but " + (b.keys.empty() ? "" : b.keys[0]) +
                          " has no annotation",
                      "point data.root at a train or val split (test frames carry no labels)");
  std::vector<model::OpenLaneTargets> out;
  for (size_t i = 0; i < b.targets.size(); ++i) {
    const data::FrameTargets& t = b.targets[i];
    at::Tensor hw = b.image_hw[static_cast<int64_t>(i)][0].to(torch::kFloat32);  // front view (H, W)
    at::Tensor scale = torch::stack({hw[1], hw[0], hw[1], hw[0]});
    at::Tensor xy = t.te_boxes.to(torch::kFloat32);
    at::Tensor cxcywh = torch::stack({(xy.select(1, 0) + xy.select(1, 2)) / 2, (xy.select(1, 1) + xy.select(1, 3)) / 2,
                                      xy.select(1, 2) - xy.select(1, 0), xy.select(1, 3) - xy.select(1, 1)},
                                     1);
    out.push_back({t.lane_points, cxcywh / scale, t.te_attributes, t.topology_lclc, t.topology_lcte});
  }
  return out;
}

// This rank's pipeline settings: the network input, batch, threads, seed, its dp shard and
// its stripe of the padded width `part` (over the sp ranks).
data::LoaderOptions loader_options(const config::ExperimentConfig& cfg, const parallel::Mesh& mesh,
                                   shard::Partition& part) {
  data::LoaderOptions o;
  o.root = cfg.data.root;
  o.height = cfg.data.height;
  o.width = cfg.data.width;
  o.batch = cfg.data.batch;
  o.workers = std::max(cfg.data.workers, 1);
  o.seed = cfg.train.seed;
  o.shard_index = mesh.dp_index();
  o.shard_count = mesh.shape().dp;
  part = shard::even_partition(data::padded_size(o).second, mesh.shape().sp);
  o.stripe_begin = part.span(mesh.sp_index()).begin;
  o.stripe_end = part.span(mesh.sp_index()).end;
  return o;
}

data::SynthViews synth_views(int64_t views) {
  std::optional<data::SynthViews> v = data::SynthStream::views_for(views);
  if (!v)
    throw util::Error(fmt::format("data.views is {}, but generated OpenLane-V2 frames have at most 7 views", views),
                      "set data.views to 7 (subset A, Argoverse 2), 6 (subset B, nuScenes) or 1..5 (the first "
                      "cameras of subset A, front view first)");
  return *v;
}

// Every dp group sees the whole evaluation split in order (only rank 0 scores).
std::unique_ptr<data::MultiViewLoader> eval_loader(data::LoaderOptions o, const config::ExperimentConfig& cfg) {
  o.split = config::name_of(cfg.data.eval_split);
  o.shuffle = false;
  o.drop_last = false;
  o.shard_index = 0;
  o.shard_count = 1;
  try {
    return std::make_unique<data::MultiViewLoader>(o);
  } catch (const util::Error& e) {
    throw util::Error(
        fmt::format("data.eval_split '{}' cannot be read from data.root {}: {}", o.split, o.root.string(), e.problem()),
        "set data.eval_split to a labelled split of data.root (e.g. \"val\"), or train.eval_every to 0");
  }
}

}  // namespace

OpenLaneTask::~OpenLaneTask() = default;

model::OpenLaneBaseline OpenLaneTask::make_model(const config::ExperimentConfig& cfg) {
  return model::OpenLaneBaseline(backbone_name(cfg), options(cfg));
}

OpenLaneTask::OpenLaneTask(const config::ExperimentConfig& cfg, const c10::Device& device, const parallel::Mesh& mesh)
    : loss_(model::OpenLaneLossWeights{cfg.loss.lc_cls, cfg.loss.lc_bbox, cfg.loss.te_cls, cfg.loss.te_bbox,
                                       cfg.loss.te_iou, cfg.loss.lclc, cfg.loss.lcte},
            options(cfg).bev),
      device_(device),
      views_(cfg.data.views) {
  model_ = make_model(cfg);
  model_->to(device_);
  const data::LoaderOptions o = loader_options(cfg, mesh, part_);
  if (cfg.data.source == config::DataSource::Synthetic) {
    synth_ = std::make_unique<data::SynthStream>(o, synth_views(cfg.data.views));
    return;
  }
  loader_ = std::make_unique<data::MultiViewLoader>(o);
  loader_->start_epoch(epoch_);
  if (cfg.train.eval_every > 0) eval_loader_ = eval_loader(o, cfg);
}

parallel::GradPlacement OpenLaneTask::placement(const std::string& name) const {
  return model::OpenLaneBaselineImpl::placement(name);
}

std::optional<OpenLaneEvaluation> OpenLaneTask::evaluate(std::shared_ptr<parallel::Communicator> sp, bool score) {
  if (!eval_loader_)
    throw util::Error("evaluation needs data.source \"openlanev2\" and train.eval_every > 0",
                      "set data.source, data.root and train.eval_every");
  torch::NoGradGuard no_grad;
  model_->eval();
  const OpenLanePredictor predictor(model_->options().bev, model_->options().lane_points);
  const std::filesystem::path root = eval_loader_->options().root;
  std::vector<data::Frame> gt;
  OpenLaneEvaluation result;
  eval_loader_->start_epoch(0);
  while (std::optional<data::FrameBatch> b = eval_loader_->next()) {
    parallel::ShardedTensor x{b->images.flatten(0, 1).to(device_), part_, sp};  // (N*V, 3, H, W/sp)
    model::OpenLaneOutputs out = model_->forward(x, b->lidar2img.to(device_), b->image_hw.to(device_));
    if (!score) continue;
    for (size_t i = 0; i < b->keys.size(); ++i) {
      const std::string& key = b->keys[i];
      const size_t s1 = key.find('/'), s2 = key.rfind('/');
      gt.push_back(data::read_frame(root, {key.substr(0, s1), key.substr(s1 + 1, s2 - s1 - 1), key.substr(s2 + 1)}));
      const data::Camera& front = gt.back().cameras.front();
      const auto hw = b->image_hw[static_cast<int64_t>(i)][0];  // front view (H, W)
      result.predictions[key] = predictor.decode(
          out, static_cast<int64_t>(i), {hw[0].item<int64_t>(), hw[1].item<int64_t>()}, {front.width, front.height});
    }
  }
  model_->train();
  if (score) result.scores = eval::evaluate(gt, result.predictions);
  return result;
}

data::FrameBatch OpenLaneTask::next_batch(int64_t first, int64_t count) {
  if (synth_) return synth_->batch(first, count);
  std::optional<data::FrameBatch> b = loader_->next();
  if (!b) {
    loader_->start_epoch(++epoch_);
    b = loader_->next();
  }
  if (!b)
    throw util::Error("data.root yields no complete batch of " + std::to_string(count) + " frames",
                      "lower data.batch or add frames (`halo data check` lists them)");
  if (b->images.size(1) != views_)
    throw util::Error(
        fmt::format("data.views is {} but the frames of data.root have {} cameras", views_, b->images.size(1)),
        fmt::format("set data.views to {} (subset_A: 7, subset_B: 6)", b->images.size(1)));
  return std::move(*b);
}

std::map<std::string, at::Tensor> OpenLaneTask::losses(int64_t first, int64_t count,
                                                       std::shared_ptr<parallel::Communicator> sp) {
  const data::FrameBatch b = next_batch(first, count);
  parallel::ShardedTensor x{b.images.flatten(0, 1).to(device_), part_, std::move(sp)};  // (N*V, 3, H, W/sp)
  offer_preview(x.local, views_);
  model::OpenLaneOutputs out = model_->forward(x, b.lidar2img.to(device_), b.image_hw.to(device_));
  return loss_(to_float(std::move(out)), targets_of(b));
}

namespace {

// The backbone's last striped layer of `stage`: its output is that stage's feature map.
const arch::LayerShape& stage_output(const std::vector<arch::LayerShape>& shapes, const arch::LayerList& layers,
                                     int stage) {
  const arch::LayerShape* last = nullptr;
  for (const arch::LayerShape& s : shapes)
    if (layers[s.layer].stage == stage) last = &s;
  if (!last) throw util::Error(fmt::format("the backbone's layout has no layer of stage {}", stage));
  return *last;
}

}  // namespace

std::vector<protocol::LayoutLayer> OpenLaneTask::layout_tail(const std::vector<arch::LayerShape>& backbone,
                                                             int64_t images, int64_t bytes_per) const {
  const model::OpenLaneBaselineOptions& o = model_->options();
  const arch::LayerList& layers = model_->img_backbone->layers();
  const arch::LayerShape& s16 = stage_output(backbone, layers, 2);
  const arch::LayerShape& s32 = stage_output(backbone, layers, 3);
  const shard::Window one{1, 1, 0, 1}, three{3, 1, 1, 1};  // the FPN's lateral and output convs
  std::vector<protocol::LayoutLayer> rows;
  rows.push_back(
      striped_row({"img_neck.lateral_convs.0", one, s16.out, s16.out, s16.channels, s16.height, o.dim, s16.height},
                  images, bytes_per));
  rows.push_back(
      striped_row({"img_neck.lateral_convs.1", one, s32.out, s32.out, s32.channels, s32.height, o.dim, s32.height},
                  images, bytes_per));
  rows.push_back(striped_row({"img_neck.fpn_convs.0", three, s16.out, s16.out, o.dim, s16.height, o.dim, s16.height},
                             images, bytes_per));
  rows.push_back(
      gather_row("gather (img_neck -> img_view_transformer)", s16.out, o.dim, s16.height, images, bytes_per));
  const int sp = s16.out.parts();
  const int64_t width = s16.out.global_width(), batch = images / views_;
  rows.push_back(replicated_row("img_view_transformer", {batch, o.dim, o.bev.ny(), o.bev.nx()}, width, sp, bytes_per));
  rows.push_back(replicated_row("lc_head", {batch, o.lane_queries, o.dim, 1}, width, sp, bytes_per));
  rows.push_back(replicated_row("te_head", {batch, o.te_queries, o.dim, 1}, width, sp, bytes_per));
  rows.push_back(replicated_row("lclc_head", {batch, o.lane_queries, o.lane_queries, 1}, width, sp, bytes_per));
  rows.push_back(replicated_row("lcte_head", {batch, o.lane_queries, o.te_queries, 1}, width, sp, bytes_per));
  return rows;
}

}  // namespace halo::train
