// Collectives and halo point-to-point over a c10d Backend, with context in every error.
// Gloo gets CPU tensors (CUDA ones are staged through host memory); NCCL gets CUDA tensors.
#include "parallel/Communicator.h"

#include <atomic>

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "parallel/CommunicatorImpl.h"
#include "parallel/PeerLostError.h"
#include "util/Error.h"

namespace halo::parallel {

namespace {

// Gloo tags: distinct per direction so two exchanges between the same pair never mix.
int tag_for(int from, int to) { return from < to ? 1 : 2; }

bool staged(BackendKind k, const at::Tensor& t) { return k == BackendKind::Gloo && t.is_cuda(); }

// t where the backend sums it: Gloo takes CUDA tensors through the host, NCCL takes host tensors
// (a run's small agreements: votes, loss sums) through this rank's current GPU.
at::Tensor on_backend(BackendKind k, const at::Tensor& t) {
  if (staged(k, t)) return t.cpu();
  return k == BackendKind::Nccl && t.is_cpu() ? t.cuda() : t;
}

void wait_or_throw(const c10::intrusive_ptr<c10d::Work>& w, const Communicator& c, const char* what,
                   std::chrono::milliseconds timeout) {
  auto fail = [&](const std::string& why) {
    return PeerLostError(
        fmt::format("{} on group '{}' (rank {} of {}) failed: {}", what, c.name(), c.rank(), c.size(), why),
        fmt::format("a peer rank died or hung; see the other ranks' logs (collective timeout: {} s, "
                    "set HALO_COLLECTIVE_TIMEOUT to change it)",
                    std::chrono::duration_cast<std::chrono::seconds>(timeout).count()));
  };
  try {
    w->wait(timeout);
  } catch (const c10::Error& e) {
    throw fail(e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw fail(e.what());
  }
}

}  // namespace

const char* to_string(BackendKind k) { return k == BackendKind::Gloo ? "gloo" : "nccl"; }

namespace {
std::atomic<int64_t> g_wait_ns{0};
}

double comm_wait_seconds() { return static_cast<double>(g_wait_ns.load()) * 1e-9; }

void Pending::wait() {
  if (wait_) {
    auto w = std::move(wait_);
    wait_ = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    w();
    g_wait_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  }
}

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;

int Communicator::rank() const { return impl_->backend->getRank(); }
int Communicator::size() const { return impl_->backend->getSize(); }
const std::string& Communicator::name() const { return impl_->name; }
BackendKind Communicator::kind() const { return impl_->kind; }

Pending Communicator::all_reduce_sum_async(at::Tensor& t) {
  if (size() == 1) return {};
  at::Tensor buf = on_backend(kind(), t);
  std::vector<at::Tensor> v{buf};
  auto work = impl_->backend->allreduce(v, c10d::AllreduceOptions{});
  return Pending([this, work, buf, t]() mutable {
    wait_or_throw(work, *this, "all-reduce", impl_->timeout);
    if (!buf.is_same(t)) t.copy_(buf);
  });
}

void Communicator::all_reduce_sum(at::Tensor& t) { all_reduce_sum_async(t).wait(); }

bool Communicator::every_rank(bool yes) {
  if (size() == 1) return yes;
  at::Tensor votes = at::full({1}, yes ? 1.0 : 0.0, at::kDouble);
  all_reduce_sum(votes);
  return votes.item<double>() == size();
}

namespace {

void check_chunks(const Communicator& c, const at::Tensor& flat, const at::Tensor& chunk, const char* what) {
  if (!flat.is_contiguous() || !chunk.is_contiguous() || flat.numel() != chunk.numel() * c.size() ||
      flat.scalar_type() != chunk.scalar_type())
    throw util::Error(fmt::format("{} on '{}': {} elements do not split into {} chunks of {}", what, c.name(),
                                  flat.numel(), c.size(), chunk.numel()));
}

}  // namespace

// Gloo's reduce-scatter and all-gather stage a whole copy of `flat` (measured: +1 flat per
// call); summing in place does not, so on Gloo both are an all-reduce of `flat` itself.
Pending Communicator::reduce_scatter_sum_async(at::Tensor& flat, at::Tensor& chunk) {
  check_chunks(*this, flat, chunk, "reduce-scatter");
  if (size() == 1) {
    chunk.copy_(flat);
    return {};
  }
  if (kind() == BackendKind::Gloo) {
    Pending sum = all_reduce_sum_async(flat);
    return Pending([this, sum = std::move(sum), flat, chunk]() mutable {
      sum.wait();
      chunk.copy_(flat.narrow(0, rank() * chunk.numel(), chunk.numel()));
    });
  }
  auto work = impl_->backend->_reduce_scatter_base(chunk, flat, c10d::ReduceScatterOptions{});
  return Pending([this, work, flat, chunk]() { wait_or_throw(work, *this, "reduce-scatter", impl_->timeout); });
}

void Communicator::all_gather_in_place(at::Tensor& flat) { all_gather_in_place_async(flat).wait(); }

Pending Communicator::all_gather_in_place_async(at::Tensor& flat) {
  if (!flat.is_contiguous() || flat.numel() % size() != 0)
    throw util::Error(
        fmt::format("all-gather on '{}': {} elements do not split into {} equal chunks", name(), flat.numel(), size()));
  if (size() == 1) return {};
  const int64_t c = flat.numel() / size();
  if (kind() == BackendKind::Gloo) {  // every other chunk zero, then the sum: x + 0 == x exactly
    if (rank() > 0) flat.narrow(0, 0, rank() * c).zero_();
    if (rank() + 1 < size()) flat.narrow(0, (rank() + 1) * c, flat.numel() - (rank() + 1) * c).zero_();
    return all_reduce_sum_async(flat);
  }
  at::Tensor mine = flat.narrow(0, rank() * c, c);  // NCCL gathers in place from the output's own chunk
  auto work = impl_->backend->_allgather_base(flat, mine, c10d::AllgatherOptions{});
  return Pending([this, work, flat]() mutable { wait_or_throw(work, *this, "all-gather", impl_->timeout); });
}

at::Tensor Communicator::all_gather_cat(const at::Tensor& t, int64_t dim, const std::vector<int64_t>& sizes) {
  if (static_cast<int>(sizes.size()) != size())
    throw util::Error(fmt::format("all-gather on '{}': {} sizes for {} ranks", name(), sizes.size(), size()));
  if (size() == 1) return t;
  // Gloo needs equal sizes: pad every piece to the largest extent, gather, then trim.
  const int64_t most = *std::max_element(sizes.begin(), sizes.end());
  at::Tensor mine = on_backend(kind(), t);
  if (mine.size(dim) < most) {
    std::vector<int64_t> shape(mine.sizes().begin(), mine.sizes().end());
    shape[static_cast<size_t>(dim)] = most - mine.size(dim);
    mine = at::cat({mine, at::zeros(shape, mine.options())}, dim);
  }
  mine = mine.contiguous();
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < size(); ++r) out[0].push_back(at::empty_like(mine));
  std::vector<at::Tensor> in{mine};
  wait_or_throw(impl_->backend->allgather(out, in, c10d::AllgatherOptions{}), *this, "all-gather", impl_->timeout);
  std::vector<at::Tensor> parts;
  for (int r = 0; r < size(); ++r)
    parts.push_back(out[0][static_cast<size_t>(r)].narrow(dim, 0, sizes[static_cast<size_t>(r)]));
  at::Tensor full = at::cat(parts, dim);
  return full.to(t.device());
}

void Communicator::broadcast(at::Tensor& t, int root) {
  if (size() == 1) return;
  at::Tensor buf = on_backend(kind(), t);
  std::vector<at::Tensor> v{buf};
  c10d::BroadcastOptions o;
  o.rootRank = root;
  wait_or_throw(impl_->backend->broadcast(v, o), *this, "broadcast", impl_->timeout);
  if (!buf.is_same(t)) t.copy_(buf);
}

void Communicator::barrier() {
  if (size() == 1) return;
  wait_or_throw(impl_->backend->barrier(c10d::BarrierOptions{}), *this, "barrier", impl_->timeout);
}

namespace {

// A contiguous tensor's bytes, as a flat uint8 view of the same storage.
at::Tensor as_bytes(const at::Tensor& t) { return t.reshape({-1}).view(at::kByte); }

}  // namespace

Pending Communicator::exchange(std::vector<P2POp> ops) {
  if (ops.empty()) return {};
  for (const P2POp& op : ops)
    if (!op.buffer.is_contiguous())
      throw util::Error(fmt::format("exchange on '{}': buffer for peer {} is not contiguous", name(), op.peer));
  return kind() == BackendKind::Nccl ? exchange_nccl(std::move(ops)) : exchange_gloo(std::move(ops));
}

// Gloo: every receive lands in the one posted a message ahead (ReceiveAhead); CUDA buffers
// travel through host copies.
Pending Communicator::exchange_gloo(std::vector<P2POp> ops) {
  std::vector<ReceiveAhead::Landing> landings;
  std::vector<std::pair<at::Tensor, at::Tensor>> copy_back;  // (host staging, user buffer)
  std::vector<c10::intrusive_ptr<c10d::Work>> sends;
  std::vector<at::Tensor> sent;  // the send buffers (host copies of CUDA ones), alive until sent
  for (P2POp& op : ops) {
    if (op.kind != P2POp::Kind::Recv) continue;
    at::Tensor host = op.buffer;
    if (staged(kind(), host)) {
      host = at::empty(op.buffer.sizes(), op.buffer.options().device(at::kCPU));
      copy_back.emplace_back(host, op.buffer);
    }
    for (auto& l : impl_->ahead.receive(*impl_->backend, op.peer, tag_for(op.peer, rank()), as_bytes(host)))
      landings.push_back(std::move(l));
  }
  for (P2POp& op : ops) {
    if (op.kind != P2POp::Kind::Send) continue;
    sent.push_back(staged(kind(), op.buffer) ? op.buffer.cpu() : op.buffer);
    for (auto& w : impl_->ahead.send(*impl_->backend, op.peer, tag_for(rank(), op.peer), as_bytes(sent.back())))
      sends.push_back(std::move(w));
  }
  return Pending([this, landings = std::move(landings), copy_back = std::move(copy_back), sends = std::move(sends),
                  sent = std::move(sent)]() {
    for (const auto& l : landings) {
      wait_or_throw(l.work, *this, "halo exchange", impl_->timeout);
      l.land();
    }
    for (const auto& w : sends) wait_or_throw(w, *this, "halo exchange", impl_->timeout);
    for (const auto& [host, dev] : copy_back) const_cast<at::Tensor&>(dev).copy_(host);
  });
}

// NCCL: every op of the exchange in one coalesced group.
Pending Communicator::exchange_nccl(std::vector<P2POp> ops) {
  impl_->backend->startCoalescing();
  for (auto which : {P2POp::Kind::Recv, P2POp::Kind::Send})
    for (P2POp& op : ops) {
      if (op.kind != which) continue;
      std::vector<at::Tensor> v{op.buffer};
      if (which == P2POp::Kind::Recv)
        impl_->backend->recv(v, op.peer, tag_for(op.peer, rank()));
      else
        impl_->backend->send(v, op.peer, tag_for(rank(), op.peer));
    }
  auto w = impl_->backend->endCoalescing();
  // Keep the buffers alive until completion.
  return Pending([this, w, ops = std::move(ops)]() {
    if (w) wait_or_throw(w, *this, "halo exchange", impl_->timeout);
  });
}

std::shared_ptr<Communicator> Communicator::solo() {
  auto impl = std::make_unique<Impl>();
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto opts = c10d::ProcessGroupGloo::Options::create();
  opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  impl->backend = c10::make_intrusive<c10d::ProcessGroupGloo>(store, 0, 1, opts);
  impl->name = "solo";
  return std::make_shared<Communicator>(std::move(impl));
}

}  // namespace halo::parallel
