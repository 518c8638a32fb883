// Width partitions and window reach: pure functions that tests call directly.
// World size 1 is the same code with a single span.
#include "shard/Partition.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::shard {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
}  // namespace

Span intersect(Span a, Span b) {
  Span r{std::max(a.begin, b.begin), std::min(a.end, b.end)};
  if (r.end < r.begin) r.end = r.begin;
  return r;
}

int64_t output_width(int64_t input_width, const Window& w) {
  const int64_t span = input_width + 2 * w.padding - w.reach();
  return span < 0 ? 0 : floor_div(span, w.stride) + 1;
}

Span input_needed(Span out, const Window& w) {
  if (out.empty()) return {out.begin * w.stride - w.padding, out.begin * w.stride - w.padding};
  return {out.begin * w.stride - w.padding, (out.end - 1) * w.stride - w.padding + w.reach()};
}

Partition::Partition(int64_t global_width, std::vector<Span> spans) : width_(global_width), spans_(std::move(spans)) {
  int64_t at = 0;
  for (const Span& s : spans_) {
    if (s.begin != at || s.end < s.begin)
      throw util::Error(fmt::format("partition of width {} is not contiguous at column {}", width_, at));
    at = s.end;
  }
  if (at != width_) throw util::Error(fmt::format("partition covers {} of {} columns", at, width_));
}

bool Partition::is_even() const {
  return std::all_of(spans_.begin(), spans_.end(), [&](const Span& s) { return s.size() == spans_.front().size(); });
}

std::string Partition::describe() const {
  std::string out;
  for (const Span& s : spans_) out += fmt::format("{}[{},{})", out.empty() ? "" : " ", s.begin, s.end);
  return out;
}

Partition even_partition(int64_t width, int parts) {
  if (parts < 1) throw util::Error(fmt::format("cannot split a width over {} ranks", parts));
  if (width % parts != 0)
    throw util::Error(fmt::format("width {} does not split evenly over {} ranks", width, parts),
                      fmt::format("use a width that is a multiple of {}, e.g. {} or {}", parts, width / parts * parts,
                                  (width / parts + 1) * parts));
  std::vector<Span> spans;
  const int64_t each = width / parts;
  for (int r = 0; r < parts; ++r) spans.push_back({r * each, (r + 1) * each});
  return Partition(width, std::move(spans));
}

Partition output_partition(const Partition& in, const Window& w) {
  const int64_t out_w = output_width(in.global_width(), w);
  std::vector<Span> spans;
  for (const Span& s : in.spans()) {
    const int64_t b = std::min(out_w, ceil_div(s.begin, w.stride));
    const int64_t e = std::min(out_w, ceil_div(s.end, w.stride));
    spans.push_back({b, e});
  }
  spans.back().end = out_w;  // columns anchored past W (only with large padding) go last
  return Partition(out_w, std::move(spans));
}

}  // namespace halo::shard
