// Creates the c10d backends of a dp x sp mesh: one per group, each under its own store
// prefix (as torch.distributed.new_group does). Gloo binds as GlooDevice.h says.
#include "parallel/Mesh.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#ifdef HALO_WITH_CUDA
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "parallel/CommunicatorImpl.h"
#include "parallel/GlooDevice.h"
#include "util/Error.h"

namespace halo::parallel {

namespace {

c10::intrusive_ptr<c10d::Store> as_intrusive(const std::shared_ptr<c10d::Store>& s) {
  return c10::intrusive_ptr<c10d::Store>::unsafe_reclaim_from_nonowning(s.get());
}

std::shared_ptr<Communicator> make_group(const WorldInfo& world, const std::shared_ptr<c10d::Store>& store,
                                         const std::string& name, int group_rank, int group_size, BackendKind kind,
                                         std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Communicator::Impl>();
  impl->name = name;
  impl->kind = kind;
  impl->timeout = timeout;  // each collective's wait
  // Joining the group waits at least 5 minutes, however short the collective timeout: ranks
  // start unevenly (loading LibTorch, a busy machine).
  const auto join = std::max<std::chrono::milliseconds>(timeout, std::chrono::minutes(5));
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>("halo/" + name, as_intrusive(store));
  if (kind == BackendKind::Gloo) {
    auto opts = c10d::ProcessGroupGloo::Options::create(join);
    opts->devices = make_gloo_devices(choose_gloo_device(world, std::getenv("GLOO_SOCKET_IFNAME")));
    impl->backend = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, group_rank, group_size, opts);
  } else {
#ifdef HALO_WITH_CUDA
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    opts->timeout = join;
    impl->backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, group_rank, group_size, opts);
#else
    throw util::Error("NCCL was requested but this Halo was built without CUDA",
                      "use backend 'gloo' (CPU ranks) or rebuild on a machine with the CUDA toolkit");
#endif
  }
  return std::make_shared<Communicator>(std::move(impl));
}

}  // namespace

Mesh::Mesh(const WorldInfo& world, std::shared_ptr<c10d::Store> store, MeshShape shape, BackendKind kind,
           std::chrono::milliseconds timeout)
    : shape_(shape), rank_(world.rank) {
  if (shape.dp < 1 || shape.sp < 1 || shape.world() != world.world_size)
    throw util::Error(
        fmt::format("mesh dp={} x sp={} does not match WORLD_SIZE={}", shape.dp, shape.sp, world.world_size),
        "choose dp and sp whose product is the number of ranks");
  world_ = make_group(world, store, "world", rank_, world.world_size, kind, timeout);
  const int g = dp_index(), i = sp_index();
  sp_ = shape.sp == 1 ? Communicator::solo()
                      : make_group(world, store, fmt::format("sp{}", g), i, shape.sp, kind, timeout);
  dp_ = shape.dp == 1 ? Communicator::solo()
                      : make_group(world, store, fmt::format("dp{}", i), g, shape.dp, kind, timeout);
}

std::shared_ptr<Mesh> Mesh::solo() {
  std::shared_ptr<Mesh> m(new Mesh());
  m->world_ = Communicator::solo();
  m->sp_ = m->world_;
  m->dp_ = m->world_;
  return m;
}

}  // namespace halo::parallel
