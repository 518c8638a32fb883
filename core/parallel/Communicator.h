// One group of ranks and the collectives Halo uses on it, over a c10d Backend: Gloo for
// CPU tensors, NCCL for CUDA tensors (CUDA tensors on Gloo are staged through the host).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace halo::parallel {

enum class BackendKind { Gloo, Nccl };
const char* to_string(BackendKind k);

// Seconds this process has spent waiting for communication to complete (all groups).
double comm_wait_seconds();

// Completion of communication started asynchronously.
class Pending {
 public:
  Pending() = default;
  explicit Pending(std::function<void()> wait) : wait_(std::move(wait)) {}
  void wait();  // idempotent

 private:
  std::function<void()> wait_;
};

// A point-to-point operation inside one exchange.
struct P2POp {
  enum class Kind { Send, Recv };
  Kind kind;
  int peer;           // rank within this group
  at::Tensor buffer;  // contiguous; filled on Recv
};

class Communicator {
 public:
  struct Impl;
  explicit Communicator(std::unique_ptr<Impl> impl);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;  // within this group
  int size() const;
  const std::string& name() const;  // "world", "sp0", "dp1", ...
  BackendKind kind() const;

  void all_reduce_sum(at::Tensor& t);           // in place, every rank gets the sum (on any device)
  Pending all_reduce_sum_async(at::Tensor& t);  // t must stay alive until wait()
  // flat: size() equal chunks, one per rank; chunk: this rank's, gets the sum over ranks of
  // their flat's chunk of this rank. Both contiguous, one dtype; flat is scratch (summed in
  // place on Gloo) and must stay alive until wait(). Allocates nothing of flat's size.
  Pending reduce_scatter_sum_async(at::Tensor& flat, at::Tensor& chunk);
  // flat: size() equal chunks, chunk rank() this rank's; afterwards chunk r holds rank r's on
  // every rank. In place: allocates nothing (CPU or NCCL tensors).
  void all_gather_in_place(at::Tensor& flat);
  Pending all_gather_in_place_async(at::Tensor& flat);  // flat must stay alive until wait()
  // Concatenates each rank's tensor along `dim`; `sizes[r]` is rank r's extent on dim.
  at::Tensor all_gather_cat(const at::Tensor& t, int64_t dim, const std::vector<int64_t>& sizes);
  void broadcast(at::Tensor& t, int root);
  // True on every rank when `yes` is true on every rank: one decision that ranks made apart
  // (by their CPUs, by a timing) taken together.
  bool every_rank(bool yes);
  void barrier();
  // Posts every op of one exchange (receives first), NCCL ops in one coalesced group; on Gloo
  // each peer's next receive is posted a message ahead. Every rank must issue its exchanges in
  // the same order, and nothing else may send to or receive from a peer of this group.
  Pending exchange(std::vector<P2POp> ops);

  // A group of one rank (no peers, no network): the degenerate case of the same code.
  static std::shared_ptr<Communicator> solo();

 private:
  Pending exchange_gloo(std::vector<P2POp> ops);
  Pending exchange_nccl(std::vector<P2POp> ops);

  std::unique_ptr<Impl> impl_;
};

}  // namespace halo::parallel
