// Gloo point-to-point with every peer's next receive posted one message ahead, so that the
// peer's send finds it ready and is written by the sending thread, not Gloo's event loop.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "shard/Partition.h"

namespace halo::parallel {

// How a message of n bytes travels on a link whose receiver has posted `capacity` bytes ahead:
// the first min(n, capacity) bytes into that receive, the rest (if any) as a second message.
// Both ends compute it from the same history, so they agree without a word. Byte ranges of the
// message; empty parts dropped.
std::vector<shard::Span> split_for_receive_ahead(int64_t n, int64_t capacity);

// Memory: per link, one buffer of the largest message so far is posted ahead (and one more
// while a message lands). It is transport memory, allocated outside LibTorch's allocator like
// Gloo's own socket buffers, so the memory tracker's counts stay those of the model's tensors.
class ReceiveAhead {
 public:
  // A receive in flight; after `work` completes, `staging` (when defined) holds the bytes that
  // belong at the front of `into`.
  struct Landing {
    c10::intrusive_ptr<c10d::Work> work;
    at::Tensor staging;
    at::Tensor into;
    void land() const;  // after the wait: copies the staged bytes into place
  };

  // Receives `bytes` (CPU, uint8, contiguous) from `peer`: takes the receive posted ahead, posts
  // one for the rest if the message is larger, then posts the next message's receive ahead.
  std::vector<Landing> receive(c10d::Backend& backend, int peer, int tag, const at::Tensor& bytes);
  // Sends `bytes` (CPU, uint8, contiguous) to `peer` in the parts the peer's receives expect.
  std::vector<c10::intrusive_ptr<c10d::Work>> send(c10d::Backend& backend, int peer, int tag, const at::Tensor& bytes);

 private:
  // The receiving end of one link: the capacity posted ahead (the largest message so far).
  struct Inbound {
    int64_t capacity = 0;
    c10::intrusive_ptr<c10d::Work> ahead;
    at::Tensor staging;  // (capacity) bytes the receive ahead lands in
  };
  std::mutex mutex_;
  std::map<int, Inbound> inbound_;   // by source peer
  std::map<int, int64_t> outbound_;  // by destination peer: the capacity it has posted ahead
};

}  // namespace halo::parallel
