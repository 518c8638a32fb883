// Verify: the sharded ranks and the unsharded reference run the same code path (the
// reference is world size 1). Ranks save named tensors; the parent assembles stripes.
#include "launch/Verify.h"

#include <filesystem>

#include <fmt/format.h>
#include <torch/torch.h>

#include "arch/Backbones.h"
#include "launch/RankSpawner.h"
#include "model/Backbone.h"
#include "parallel/Collectives.h"
#include "parallel/GradSync.h"
#include "parallel/Mesh.h"
#include "parallel/Rendezvous.h"
#include "shard/ShardingCheck.h"
#include "util/Error.h"

namespace halo::launch {

namespace fs = std::filesystem;
using parallel::Mesh;
using parallel::ShardedTensor;

double VerifyOptions::effective_tolerance() const {
  if (tolerance > 0) return tolerance;
  return dtype == "float64" ? 1e-10 : 1e-5;
}

namespace {

torch::Dtype dtype_of(const VerifyOptions& o) { return o.dtype == "float64" ? torch::kFloat64 : torch::kFloat32; }

std::shared_ptr<model::BackboneImpl> build_model(const VerifyOptions& o) {
  torch::manual_seed(o.seed);
  std::shared_ptr<model::BackboneImpl> m = model::make_backbone(o.arch, o.num_classes, o.input[1]);
  m->to(dtype_of(o));
  // Layer scale starts at 1e-6 in timm and a ResNet block's last BatchNorm at 0; verify with
  // O(1) scales so every path carries signal.
  torch::NoGradGuard no_grad;
  for (auto& p : m->named_parameters())
    if (p.key().find("gamma") != std::string::npos) p.value().fill_(0.5);
  for (auto& mod : m->modules(false))
    if (auto* bn = dynamic_cast<torch::nn::BatchNorm2dImpl*>(mod.get())) bn->weight.fill_(1.0);
  return m;
}

// Input and target of dp group g: (V, C, H, W) and (V, classes).
std::pair<torch::Tensor, torch::Tensor> sample(const VerifyOptions& o, int g) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed * 7919 + 17 + static_cast<uint64_t>(g));
  auto opts = torch::TensorOptions().dtype(dtype_of(o));
  torch::Tensor x = torch::randn({o.input[0], o.input[1], o.input[2], o.input[3]}, gen, opts);
  torch::Tensor t = torch::randn({o.input[0], o.num_classes}, gen, opts);
  return {x, t};
}

double rel_error(const torch::Tensor& got, const torch::Tensor& want) {
  if (got.sizes() != want.sizes()) return std::numeric_limits<double>::infinity();
  const double scale = want.abs().max().item<double>();
  const double diff = (got - want).abs().max().item<double>();
  return scale > 0 ? diff / scale : diff;
}

}  // namespace

void validate(const VerifyOptions& o) {
  std::vector<std::string> problems;
  const auto layers = arch::backbone_layers(o.arch, 1, std::max<int64_t>(o.input[1], 1));
  if (!layers)
    problems.push_back(fmt::format("--arch '{}' is unknown; choose one of: {}", o.arch, arch::backbone_names()));
  for (int i = 0; i < 4; ++i)
    if (o.input[i] < 1) problems.push_back(fmt::format("--input {} must be positive (got {})", "VCHW"[i], o.input[i]));
  if (o.sp < 1) problems.push_back(fmt::format("--sp must be >= 1 (got {})", o.sp));
  if (o.dp < 1) problems.push_back(fmt::format("--dp must be >= 1 (got {})", o.dp));
  if (o.sp * o.dp > 64)
    problems.push_back(fmt::format("--sp x --dp = {} ranks is more than this command runs (64)", o.sp * o.dp));
  if (o.dtype != "float64" && o.dtype != "float32")
    problems.push_back(fmt::format("--dtype '{}' must be float64 or float32", o.dtype));
  if (o.input[2] < 32)
    problems.push_back(fmt::format("--input H={} is below the backbone's total stride 32", o.input[2]));
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += "\n  - " + p;
    throw util::Error("halo verify: invalid options:" + all);
  }
  shard::check_shardable(layers->windows(), o.input[3], o.sp);
}

std::vector<std::string> verify_rank_args(const VerifyOptions& o, const std::string& out_dir) {
  return {"verify-rank",
          "--arch",
          o.arch,
          "--input",
          fmt::format("{},{},{},{}", o.input[0], o.input[1], o.input[2], o.input[3]),
          "--sp",
          std::to_string(o.sp),
          "--dp",
          std::to_string(o.dp),
          "--dtype",
          o.dtype,
          "--seed",
          std::to_string(o.seed),
          "--classes",
          std::to_string(o.num_classes),
          o.checkpoint ? "--checkpoint" : "--no-checkpoint",
          o.recompute_cheap ? "--recompute-cheap" : "--no-recompute-cheap",
          o.overlap ? "--overlap" : "--no-overlap",
          "--out",
          out_dir};
}

void run_verify_rank(const VerifyOptions& o, const std::string& out_dir) {
  torch::set_num_threads(1);
  auto world = parallel::world_from_env();
  if (!world) throw util::Error("verify-rank needs RANK and WORLD_SIZE", "it is started by `halo verify`");
  auto store = parallel::connect_store(*world, std::chrono::seconds(o.timeout_s));
  auto mesh = std::make_shared<Mesh>(*world, store, parallel::MeshShape{o.dp, o.sp}, parallel::BackendKind::Gloo,
                                     std::chrono::seconds(o.timeout_s));
  std::shared_ptr<model::BackboneImpl> m = build_model(o);
  m->set_overlap(o.overlap);
  if (o.checkpoint) m->set_checkpoint(model::CheckpointLevel::Block);
  m->set_recompute_cheap(o.recompute_cheap);  // the unsharded reference runs the plain ops
  auto [full, target] = sample(o, mesh->dp_index());
  ShardedTensor x = parallel::shard_evenly(full, mesh->sp_ptr());
  x.local.requires_grad_(true);
  torch::Tensor logits = m->forward(x);  // (V, classes), replicated over sp
  torch::Tensor loss = (logits - target).pow(2).mean();
  loss.backward();
  std::vector<std::pair<std::string, torch::Tensor>> params;
  for (auto& p : m->named_parameters()) params.emplace_back(p.key(), p.value());
  parallel::GradSync sync(
      params, [&m](const std::string& name) { return m->grad_placement(name); }, mesh);
  sync.sync();
  torch::serialize::OutputArchive ar;
  ar.write("output", logits.detach());
  ar.write("loss", loss.detach());
  ar.write("input_grad", x.local.grad());
  for (auto& [name, p] : params) ar.write("grad:" + name, p.grad());
  ar.save_to(fmt::format("{}/rank{}.pt", out_dir, world->rank));
  mesh->world().barrier();
}

VerifyReport run_verify(const VerifyOptions& o) {
  validate(o);
  torch::set_num_threads(1);
  const fs::path dir = fs::temp_directory_path() / fmt::format("halo-verify-{}", ::getpid());
  fs::create_directories(dir);
  const int world = o.sp * o.dp;
  parallel::LocalStoreServer server(0, world, std::chrono::seconds(o.timeout_s));
  RankSpawner ranks(self_executable(), verify_rank_args(o, dir.string()),
                    {{"HALO_AGENT_STORE", "1"}, {"OMP_NUM_THREADS", "1"}}, dir.string());
  ranks.start(world, server.port());

  // Reference: every dp group's samples on one process, one forward per group (BatchNorm's
  // statistics are per group, as on the ranks), loss = mean over groups.
  std::shared_ptr<model::BackboneImpl> m = build_model(o);
  std::vector<torch::Tensor> xs, ts, outs;
  torch::Tensor loss = torch::zeros({}, torch::TensorOptions().dtype(dtype_of(o)));
  for (int g = 0; g < o.dp; ++g) {
    auto [xg, t] = sample(o, g);
    xs.push_back(xg.requires_grad_(true));
    ts.push_back(t);
    ShardedTensor x1{xs.back(), shard::even_partition(xg.size(3), 1), parallel::Communicator::solo()};
    outs.push_back(m->forward(x1));
    loss = loss + (outs.back() - t).pow(2).mean() / o.dp;
  }
  loss.backward();
  torch::Tensor logits = torch::cat(outs);
  std::vector<torch::Tensor> x_grads;
  for (const torch::Tensor& xg : xs) x_grads.push_back(xg.grad());
  torch::Tensor x_grad = torch::cat(x_grads);  // (dp*V, C, H, W)

  auto exits = ranks.wait_all(std::chrono::seconds(o.timeout_s));
  for (const auto& e : exits)
    if (e.code != 0)
      throw util::Error(fmt::format("verify rank {} failed with exit code {}; its last output:\n{}", e.rank, e.code,
                                    ranks.log_tail(e.rank)));

  VerifyReport rep;
  rep.options = o;
  const int64_t V = o.input[0];
  auto add = [&](std::string q, double e) {
    rep.worst = std::max(rep.worst, e);
    rep.rows.push_back({std::move(q), e});
  };
  std::vector<torch::serialize::InputArchive> ar(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) ar[static_cast<size_t>(r)].load_from(fmt::format("{}/rank{}.pt", dir.string(), r));
  auto read = [&](int r, const std::string& key) {
    torch::Tensor t;
    ar[static_cast<size_t>(r)].read(key, t);
    return t;
  };
  double e_out = 0, e_loss = 0, e_in = 0;
  for (int g = 0; g < o.dp; ++g) {
    torch::Tensor ref_logits = logits.detach().narrow(0, g * V, V);
    torch::Tensor ref_loss = (ref_logits - ts[static_cast<size_t>(g)]).pow(2).mean();
    std::vector<torch::Tensor> stripes;
    for (int i = 0; i < o.sp; ++i) {
      const int r = g * o.sp + i;
      e_out = std::max(e_out, rel_error(read(r, "output"), ref_logits));
      e_loss = std::max(e_loss, rel_error(read(r, "loss"), ref_loss));
      stripes.push_back(read(r, "input_grad"));
    }
    // The rank's loss is its group's; the reference's is the mean over dp groups.
    e_in = std::max(e_in, rel_error(torch::cat(stripes, 3), x_grad.narrow(0, g * V, V) * o.dp));
  }
  add("output", e_out);
  add("loss", e_loss);
  add("input_grad", e_in);
  for (auto& p : m->named_parameters()) {
    double e = 0;
    for (int r = 0; r < world; ++r) e = std::max(e, rel_error(read(r, "grad:" + p.key()), p.value().grad()));
    add("grad:" + p.key(), e);
  }
  rep.ok = rep.worst <= o.effective_tolerance();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return rep;
}

}  // namespace halo::launch
