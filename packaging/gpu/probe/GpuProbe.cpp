// halo_gpu_probe: the CUDA checks of packaging/gpu-check.sh (stage b) that need no ranks,
// one JSON object per line: {"check", "status": pass|fail|skip, "detail", "value"?}.
// Exit code 1 when any check fails. Without a GPU (or built without CUDA) the CUDA checks
// report "skip" and the CPU controls still run.
//   - the device, and the CUDA/cuDNN/NCCL versions LibTorch loads
//   - MemoryTracker::cuda against the driver's free-memory figure (1 GiB allocated)
//   - Halo's Mesh on NCCL at world size 1 and each of its collectives on CUDA tensors (Halo
//     returns at once at size 1), then every c10d NCCL collective at size 1 directly
//   - ConvNeXt on CUDA in float64 equals the CPU; activation checkpointing with stochastic
//     depth replays the CUDA RNG (gradients equal without checkpointing); bf16/fp16 autocast
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#ifdef HALO_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "model/ConvNeXt.h"
#include "parallel/Mesh.h"
#include "parallel/ShardedTensor.h"
#include "train/MemoryTracker.h"

// The variant table moves from model/ to its own module (halo::arch) on a branch: name it
// through halo::model either way.
namespace halo::arch {}
namespace halo::model {
using namespace halo::arch;  // NOLINT
}

namespace {

using nlohmann::json;
int failures = 0;

void emit(const std::string& check, const std::string& status, const std::string& detail, json value = nullptr) {
  json j{{"check", check}, {"status", status}, {"detail", detail}};
  if (!value.is_null()) j["value"] = std::move(value);
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
  if (status == "fail") ++failures;
}

// Runs one check; an exception is a failure with its message.
void check(const std::string& name, const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    std::string what = e.what();
    emit(name, "fail", what.substr(0, what.find('\n')));
  }
}

double rel(const torch::Tensor& got, const torch::Tensor& want) {
  const double scale = want.abs().max().item<double>();
  const double diff = (got.to(want.device(), want.scalar_type()) - want).abs().max().item<double>();
  return scale > 0 ? diff / scale : diff;
}

// convnext_test with O(1) layer scales (as halo verify does), so every path carries signal.
halo::model::ConvNeXt make_model(double drop_path, torch::Device dev, torch::Dtype dt) {
  torch::manual_seed(7);
  halo::model::ConvNeXt m(*halo::model::find_convnext_variant("convnext_test"), 10, 3, drop_path);
  torch::NoGradGuard g;
  for (auto& p : m->named_parameters())
    if (p.key().find("gamma") != std::string::npos) p.value().fill_(0.5);
  m->to(dev, dt);
  return m;
}

struct Grads {
  torch::Tensor logits, input_grad;
  std::vector<torch::Tensor> params;
};

Grads step(halo::model::ConvNeXt& m, const torch::Tensor& x_cpu, torch::Device dev, uint64_t seed) {
  torch::manual_seed(seed);  // CPU and CUDA generators: the stochastic-depth masks
  torch::Tensor x = x_cpu.to(dev).detach().requires_grad_(true);
  auto solo = halo::parallel::Communicator::solo();
  halo::parallel::ShardedTensor xs = halo::parallel::shard_evenly(x, solo);
  xs.local = x;
  torch::Tensor logits = m->forward(xs);
  logits.pow(2).mean().backward();
  Grads g{logits.detach(), x.grad().detach(), {}};
  for (auto& p : m->parameters()) {
    g.params.push_back(p.grad().detach().clone());
    p.mutable_grad().zero_();
  }
  return g;
}

double worst(const Grads& a, const Grads& b) {
  double w = std::max(rel(a.logits, b.logits), rel(a.input_grad, b.input_grad));
  for (size_t i = 0; i < a.params.size(); ++i) w = std::max(w, rel(a.params[i], b.params[i]));
  return w;
}

void model_checks(bool cuda) {
  const torch::Tensor x = torch::randn({2, 3, 64, 128}, torch::kFloat64);
  const torch::Device cpu(torch::kCPU);
  // Control on the CPU: checkpointing with stochastic depth replays the CPU RNG.
  check("checkpoint.cpu_rng", [&] {
    auto m = make_model(0.3, cpu, torch::kFloat64);
    m->train();
    const Grads plain = step(m, x, cpu, 11);
    m->set_checkpoint(halo::model::CheckpointLevel::Block);
    const Grads ck = step(m, x, cpu, 11);
    const Grads other = step(m, x, cpu, 12);  // other masks: stochastic depth is really on
    const double e = worst(plain, ck), d = worst(plain, other);
    emit("checkpoint.cpu_rng", e <= 1e-10 && d > 1e-6 ? "pass" : "fail",
         "float64, drop_path 0.3: block checkpointing vs none, worst relative error (another seed: " +
             std::to_string(d) + ")",
         e);
  });
  if (!cuda) {
    for (const char* c : {"model.cuda_vs_cpu", "checkpoint.cuda_rng", "autocast.bf16", "autocast.fp16"})
      emit(c, "skip", "no CUDA device");
    return;
  }
  const torch::Device gpu(torch::kCUDA, 0);
  check("model.cuda_vs_cpu", [&] {
    auto a = make_model(0.0, cpu, torch::kFloat64);
    auto b = make_model(0.0, gpu, torch::kFloat64);
    const double e = worst(step(a, x, cpu, 1), step(b, x, gpu, 1));
    emit("model.cuda_vs_cpu", e <= 1e-9 ? "pass" : "fail",
         "convnext_test float64, logits and every gradient, CUDA vs CPU", e);
  });
  check("checkpoint.cuda_rng", [&] {
    auto m = make_model(0.3, gpu, torch::kFloat64);
    m->train();
    const Grads plain = step(m, x, gpu, 11);
    m->set_checkpoint(halo::model::CheckpointLevel::Block);
    const Grads ck = step(m, x, gpu, 11);
    const Grads other = step(m, x, gpu, 12);
    const double e = worst(plain, ck), d = worst(plain, other);
    emit("checkpoint.cuda_rng", e <= 1e-9 && d > 1e-6 ? "pass" : "fail",
         "float64 on CUDA, drop_path 0.3: block checkpointing vs none (the CUDA RNG is replayed; another seed: " +
             std::to_string(d) + ")",
         e);
  });
  for (auto [name, dt, tol] :
       {std::tuple{"autocast.bf16", torch::kBFloat16, 5e-2}, std::tuple{"autocast.fp16", torch::kHalf, 1e-2}}) {
    check(name, [&, name = name, dt = dt, tol = tol] {
      auto m = make_model(0.0, gpu, torch::kFloat32);
      const torch::Tensor xf = x.to(torch::kFloat32);
      const Grads ref = step(m, xf, gpu, 1);
      at::autocast::set_autocast_enabled(at::kCUDA, true);
      at::autocast::set_autocast_dtype(at::kCUDA, dt);
      const Grads low = step(m, xf, gpu, 1);
      at::autocast::set_autocast_enabled(at::kCUDA, false);
      at::autocast::clear_cache();
      const bool finite = torch::isfinite(low.logits).all().item<bool>();
      const double e = rel(low.logits.to(torch::kFloat32), ref.logits);
      emit(name, finite && e <= tol ? "pass" : "fail",
           std::string("autocast forward+backward on CUDA, logits vs fp32 (tolerance ") +
               (tol > 2e-2 ? "5e-2)" : "1e-2)"),
           e);
    });
  }
}

#ifdef HALO_WITH_CUDA
void cuda_checks() {
  const auto& p = *at::cuda::getDeviceProperties(0);
  const auto nccl = c10d::getNcclVersion();
  emit("cuda.device", "pass",
       std::string(p.name) + ", sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
           std::to_string(p.multiProcessorCount) + " SMs",
       {{"name", p.name},
        {"capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
        {"total_bytes", p.totalGlobalMem},
        {"cuda_runtime", CUDART_VERSION},
        {"cudnn", at::detail::getCUDAHooks().versionCuDNN()},
        {"nccl", nccl}});

  check("memory_tracker.cuda", [] {
    c10::cuda::CUDACachingAllocator::emptyCache();
    size_t free0 = 0, free1 = 0, total = 0;
    cudaMemGetInfo(&free0, &total);
    halo::train::MemoryTracker::reset_peak();
    const auto before = halo::train::MemoryTracker::cuda(0);
    torch::Tensor t =
        torch::empty({int64_t{1} << 28}, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat));
    t.fill_(1);
    torch::cuda::synchronize();
    const auto during = halo::train::MemoryTracker::cuda(0);
    cudaMemGetInfo(&free1, &total);
    t = torch::Tensor();
    const auto after = halo::train::MemoryTracker::cuda(0);
    const int64_t GiB = int64_t{1} << 30;
    const bool ok = during.current - before.current == GiB && during.peak >= during.current &&
                    during.reserved >= during.current && after.current == before.current && after.peak >= GiB &&
                    static_cast<int64_t>(free0 - free1) >= GiB;
    emit("memory_tracker.cuda", ok ? "pass" : "fail",
         "1 GiB tensor: allocated +1 GiB, peak >= allocated, reserved >= allocated; driver free memory -1 GiB",
         {{"allocated_delta", during.current - before.current},
          {"peak", during.peak},
          {"reserved", during.reserved},
          {"driver_free_delta", static_cast<int64_t>(free0 - free1)}});
  });
}

// Last: NCCL (a hang costs only what follows it, under the stage's timeout).
void nccl_checks() {
  check("halo_mesh.nccl_ws1", [] {
    auto store = std::make_shared<c10d::HashStore>();
    halo::parallel::WorldInfo w;
    halo::parallel::Mesh mesh(w, store, {1, 1}, halo::parallel::BackendKind::Nccl, std::chrono::seconds(60));
    auto& c = mesh.world();
    torch::Tensor t = torch::arange(8, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat));
    const torch::Tensor ref = t.clone();
    c.all_reduce_sum(t);
    c.all_reduce_sum_async(t).wait();
    torch::Tensor g = c.all_gather_cat(t.view({1, 1, 1, 8}), 3, {8});
    c.broadcast(t, 0);
    c.barrier();
    c.exchange({}).wait();
    const bool ok = c.kind() == halo::parallel::BackendKind::Nccl && torch::equal(t, ref) &&
                    torch::equal(g.view({8}), ref) && g.is_cuda();
    emit("halo_mesh.nccl_ws1", ok ? "pass" : "fail",
         "Mesh(world 1, NCCL) and each Communicator collective on CUDA tensors (Halo returns at once at size 1)");
  });

  // c10d's NCCL backend itself at size 1, the same libnccl that libtorch_cuda loads.
  auto store = c10::make_intrusive<c10d::PrefixStore>("probe", c10::make_intrusive<c10d::HashStore>());
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = std::chrono::seconds(60);
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> pg;
  check("nccl.init", [&] {
    pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, 0, 1, opts);
    emit("nccl.init", "pass", "ProcessGroupNCCL rank 0 of 1");
  });
  if (!pg) return;
  const auto cu = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat);
  auto run = [&](const std::string& name, const std::function<bool()>& body) {
    check("nccl." + name, [&] {
      const bool ok = body();
      torch::cuda::synchronize();
      emit("nccl." + name, ok ? "pass" : "fail", "world size 1, CUDA tensors");
    });
  };
  run("allreduce", [&] {
    std::vector<torch::Tensor> v{torch::full({1024}, 3.0, cu)};
    pg->allreduce(v)->wait();
    return v[0].eq(3.0).all().item<bool>();
  });
  run("allgather", [&] {
    std::vector<torch::Tensor> in{torch::arange(16, cu)};
    std::vector<std::vector<torch::Tensor>> out{{torch::zeros({16}, cu)}};
    pg->allgather(out, in)->wait();
    return torch::equal(out[0][0], in[0]);
  });
  run("broadcast", [&] {
    std::vector<torch::Tensor> v{torch::arange(16, cu)};
    pg->broadcast(v)->wait();
    return torch::equal(v[0], torch::arange(16, cu));
  });
  run("reduce_scatter", [&] {
    std::vector<torch::Tensor> out{torch::zeros({16}, cu)};
    std::vector<std::vector<torch::Tensor>> in{{torch::arange(16, cu)}};
    pg->reduce_scatter(out, in)->wait();
    return torch::equal(out[0], in[0][0]);
  });
  run("barrier", [&] {
    pg->barrier()->wait();
    return true;
  });
  // Last: NCCL to itself.
  run("send_recv_coalesced", [&] {
    // The halo exchange's pattern: receives and sends of one exchange in one NCCL group.
    std::vector<torch::Tensor> s{torch::arange(64, cu)}, r{torch::zeros({64}, cu)};
    pg->startCoalescing();
    pg->recv(r, 0, 0);
    pg->send(s, 0, 0);
    auto w = pg->endCoalescing();
    if (w) w->wait();
    return torch::equal(r[0], s[0]);
  });
}
#endif

}  // namespace

int main() {
  torch::set_num_threads(4);
  bool cuda = false;
#ifdef HALO_WITH_CUDA
  cuda = torch::cuda::is_available();
  if (cuda) {
    cuda_checks();
  } else {
    emit("cuda.device", "skip", "built with CUDA, but no GPU is visible");
  }
#else
  emit("cuda.device", "skip", "built without CUDA (HALO_WITH_CUDA off)");
#endif
  if (!cuda)
    for (const char* c : {"memory_tracker.cuda", "halo_mesh.nccl_ws1", "nccl.collectives"})
      emit(c, "skip", "no CUDA device");
  model_checks(cuda);
#ifdef HALO_WITH_CUDA
  if (cuda) nccl_checks();
#endif
  return failures == 0 ? 0 : 1;
}
