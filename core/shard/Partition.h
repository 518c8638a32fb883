// Pure maths of splitting a width W over the ranks of an sp group: who owns which
// columns, and which columns an op (kernel, stride, padding, dilation) needs per rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halo::shard {

// Half-open column range [begin, end) in global coordinates.
struct Span {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
  bool operator==(const Span&) const = default;
};

Span intersect(Span a, Span b);

// A sliding window along W (convolution or pooling).
struct Window {
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t dilation = 1;
  int64_t reach() const { return dilation * (kernel - 1) + 1; }  // input columns one output sees
};

int64_t output_width(int64_t input_width, const Window& w);

// Input columns output columns [out.begin, out.end) read: [o0*s - p, (o1-1)*s - p + d*(k-1)].
// May start below 0 or end past W: those columns are the op's padding.
Span input_needed(Span out, const Window& w);

// Which columns of a global width each rank of the group owns (contiguous, ascending).
class Partition {
 public:
  Partition() = default;
  Partition(int64_t global_width, std::vector<Span> spans);

  int64_t global_width() const { return width_; }
  int parts() const { return static_cast<int>(spans_.size()); }
  const Span& span(int rank) const { return spans_.at(static_cast<size_t>(rank)); }
  const std::vector<Span>& spans() const { return spans_; }
  bool is_even() const;
  std::string describe() const;  // "[0,8) [8,16)"
  bool operator==(const Partition&) const = default;

 private:
  int64_t width_ = 0;
  std::vector<Span> spans_;
};

// W split into `parts` equal stripes; throws util::Error when W % parts != 0.
Partition even_partition(int64_t width, int parts);

// The output columns each rank computes: output column o belongs to the rank owning input
// column o*stride (the window's anchor), clipped to the output width. World size 1 gives
// the whole output.
Partition output_partition(const Partition& in, const Window& w);

}  // namespace halo::shard
