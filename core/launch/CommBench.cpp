// Each configuration runs in its own processes (one thread each) so the figures are
// comparable; rank 0 reports its timings as JSON, the parent prints the table.
#include "launch/CommBench.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "launch/RankSpawner.h"
#include "model/ConvNeXt.h"
#include "parallel/GradSync.h"
#include "parallel/HaloExchange.h"
#include "parallel/Mesh.h"
#include "parallel/Rendezvous.h"
#include "util/Error.h"

namespace halo::launch {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

}  // namespace

std::vector<std::string> comm_bench_rank_args(const CommBenchOptions& o, bool overlap, const std::string& out_file) {
  return {"bench",
          "comm-rank",
          "--batch",
          std::to_string(o.batch),
          "--dim",
          std::to_string(o.dim),
          "--height",
          std::to_string(o.height),
          "--width",
          std::to_string(o.width),
          "--depth",
          std::to_string(o.depth),
          "--iters",
          std::to_string(o.iters),
          "--warmup",
          std::to_string(o.warmup),
          overlap ? "--overlap" : "--no-overlap",
          "--out",
          out_file};
}

void run_comm_bench_rank(const CommBenchOptions& o, bool overlap, const std::string& out_file) {
  torch::set_num_threads(1);
  auto world = parallel::world_from_env();
  if (!world) throw util::Error("bench comm-rank needs RANK and WORLD_SIZE", "it is started by `halo bench comm`");
  auto store = parallel::connect_store(*world, std::chrono::seconds(o.timeout_s));
  auto mesh = std::make_shared<parallel::Mesh>(*world, store, parallel::MeshShape{1, world->world_size},
                                               parallel::BackendKind::Gloo, std::chrono::seconds(o.timeout_s));
  torch::manual_seed(0);
  model::ConvNeXtStage stage(o.dim, o.dim, o.depth, false, false, 1e-6);
  for (auto& m : stage->modules(false))
    if (auto* c = dynamic_cast<model::ShardedConv2dImpl*>(m.get())) c->set_overlap(overlap);
  torch::Tensor full = torch::randn({o.batch, o.dim, o.height, o.width});
  parallel::ShardedTensor x = parallel::shard_evenly(full, mesh->sp_ptr());
  x.local.requires_grad_(true);
  std::vector<std::pair<std::string, torch::Tensor>> params;
  for (auto& p : stage->named_parameters()) params.emplace_back(p.key(), p.value());
  parallel::GradSync sync(
      params, [](const std::string&) { return parallel::GradPlacement::Partial; }, mesh);

  double total = 0;
  for (int i = 0; i < o.warmup + o.iters; ++i) {
    mesh->world().barrier();
    const auto t0 = clock_type::now();
    stage->forward(x).local.sum().backward();
    sync.sync();
    if (i >= o.warmup) total += ms_since(t0);
  }
  nlohmann::json j;
  j["step_ms"] = total / o.iters;

  // Halo traffic per conv_dw layer: gather + scatter round trips of the real shapes.
  for (size_t b = 0; b < stage->blocks->size(); ++b) {
    const auto& conv = *stage->blocks->at<model::ConvNeXtBlockImpl>(b).conv_dw;
    const shard::HaloPlan plan = shard::make_halo_plan(x.part, conv.spec().along_w(), mesh->rank(), "conv_dw");
    int64_t cols = 0;
    for (const auto& t : plan.sends) cols += t.columns.size();
    const auto [from_left, from_right] = plan.peer_columns();
    double ex = 0;
    for (int i = 0; i < o.warmup + o.iters; ++i) {
      mesh->world().barrier();
      const auto t0 = clock_type::now();
      parallel::HaloGather g(mesh->sp(), plan, x.local.detach());
      torch::Tensor ext = g.finish(0.0);
      parallel::HaloScatter s(mesh->sp(), plan, ext);
      s.finish();
      if (i >= o.warmup) ex += ms_since(t0);
    }
    j["layers"].push_back({{"layer", fmt::format("blocks.{}.conv_dw", b)},  // columns from neighbours
                           {"halo_left", from_left},
                           {"halo_right", from_right},
                           {"bytes_per_step", 2 * cols * o.batch * o.dim * o.height * 4},
                           {"exchange_ms", ex / o.iters}});
  }
  if (mesh->rank() == 0) std::ofstream(out_file) << j.dump();
  mesh->world().barrier();
}

CommBenchReport run_comm_bench(const CommBenchOptions& o) {
  if (o.width % (2 * o.sp) != 0 || o.iters < 1 || o.batch < 1 || o.dim < 1 || o.height < 7)
    throw util::Error(
        fmt::format("bench comm: invalid shape/iterations (batch {}, dim {}, height {}, width {}, iters {})", o.batch,
                    o.dim, o.height, o.width, o.iters),
        "width must be a multiple of 2*sp, height >= 7, iters >= 1");
  const fs::path dir = fs::temp_directory_path() / fmt::format("halo-bench-comm-{}", ::getpid());
  fs::create_directories(dir);
  CommBenchReport rep;
  rep.options = o;
  struct Cfg {
    int sp;
    bool overlap;
    std::string name;
  };
  const std::vector<Cfg> cfgs{{1, true, "sp=1 (1 process, 1 thread)"},
                              {o.sp, true, fmt::format("sp={} overlap (1 thread each)", o.sp)},
                              {o.sp, false, fmt::format("sp={} no overlap (1 thread each)", o.sp)}};
  for (const Cfg& c : cfgs) {
    const std::string out = (dir / fmt::format("sp{}-{}.json", c.sp, c.overlap)).string();
    parallel::LocalStoreServer server(0, c.sp, std::chrono::seconds(o.timeout_s));
    RankSpawner ranks(self_executable(), comm_bench_rank_args(o, c.overlap, out),
                      {{"HALO_AGENT_STORE", "1"}, {"OMP_NUM_THREADS", "1"}}, dir.string());
    std::fprintf(stderr, "bench comm: running %s ...\n", c.name.c_str());
    ranks.start(c.sp, server.port());
    for (const auto& e : ranks.wait_all(std::chrono::seconds(o.timeout_s)))
      if (e.code != 0)
        throw util::Error(fmt::format("bench rank {} failed (exit {}):\n{}", e.rank, e.code, ranks.log_tail(e.rank)));
    nlohmann::json j = nlohmann::json::parse(std::ifstream(out));
    CommConfigRow row{c.name, c.sp, c.overlap, j["step_ms"].get<double>(), 1.0};
    if (!rep.configs.empty()) row.speedup = rep.configs.front().step_ms / row.step_ms;
    rep.configs.push_back(row);
    if (c.sp > 1 && c.overlap)
      for (const auto& l : j["layers"])
        rep.layers.push_back({l["layer"], l["halo_left"], l["halo_right"], l["bytes_per_step"], l["exchange_ms"]});
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return rep;
}

}  // namespace halo::launch
