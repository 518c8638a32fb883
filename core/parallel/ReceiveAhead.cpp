// Receives posted one message ahead on each Gloo link; the split rule both ends share.
// Measured why: docs/measurements.md, "Stop 39: where sp=2's exchange waits come from".
#include "parallel/ReceiveAhead.h"

#include <algorithm>

namespace halo::parallel {

std::vector<shard::Span> split_for_receive_ahead(int64_t n, int64_t capacity) {
  std::vector<shard::Span> parts;
  const int64_t first = std::min(n, capacity);
  if (first > 0) parts.push_back({0, first});
  if (n > first) parts.push_back({first, n});
  return parts;
}

namespace {

c10::intrusive_ptr<c10d::Work> post_recv(c10d::Backend& backend, const at::Tensor& into, int peer, int tag) {
  std::vector<at::Tensor> v{into};
  return backend.recv(v, peer, tag);
}

// Transport memory, like Gloo's socket buffers: outside LibTorch's allocator (and so outside
// the memory tracker's counts, which are the model's tensors). (bytes) uint8.
at::Tensor transport_buffer(int64_t bytes) {
  auto* data = new uint8_t[static_cast<size_t>(bytes)];
  return at::from_blob(
      data, {bytes}, [](void* p) { delete[] static_cast<uint8_t*>(p); }, at::TensorOptions().dtype(at::kByte));
}

}  // namespace

void ReceiveAhead::Landing::land() const {
  if (staging.defined()) into.copy_(staging.narrow(0, 0, into.numel()));
}

std::vector<ReceiveAhead::Landing> ReceiveAhead::receive(c10d::Backend& backend, int peer, int tag,
                                                         const at::Tensor& bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  Inbound& link = inbound_[peer];
  const int64_t n = bytes.numel();
  std::vector<Landing> landings;
  for (const shard::Span& part : split_for_receive_ahead(n, link.capacity)) {
    at::Tensor into = bytes.narrow(0, part.begin, part.size());
    if (part.begin == 0 && link.capacity > 0)  // the receive posted ahead
      landings.push_back({std::move(link.ahead), std::move(link.staging), into});
    else  // the rest of a message larger than any before: straight into place
      landings.push_back({post_recv(backend, into, peer, tag), at::Tensor(), into});
  }
  if (n == 0) return landings;
  // The receive ahead was taken above (or, on a link's first message, never posted): post the
  // next message's now.
  link.capacity = std::max(link.capacity, n);
  link.staging = transport_buffer(link.capacity);
  link.ahead = post_recv(backend, link.staging, peer, tag);
  return landings;
}

std::vector<c10::intrusive_ptr<c10d::Work>> ReceiveAhead::send(c10d::Backend& backend, int peer, int tag,
                                                               const at::Tensor& bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t& capacity = outbound_[peer];
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  for (const shard::Span& part : split_for_receive_ahead(bytes.numel(), capacity)) {
    std::vector<at::Tensor> v{bytes.narrow(0, part.begin, part.size())};
    works.push_back(backend.send(v, peer, tag));
  }
  capacity = std::max(capacity, bytes.numel());
  return works;
}

}  // namespace halo::parallel
