// Live bytes follow the engine: a layer frees its input after forward unless it keeps it;
// backward frees each layer's saved tensors once it ran; a checkpointed segment keeps its
// input, recomputes itself with grad inside backward and holds its output meanwhile.
#include "memory/StepSimulator.h"

#include <algorithm>

namespace halo::memory {

namespace {

class Live {
 public:
  Live(int64_t start, std::vector<TracePoint>* trace) : live_(start), trace_(trace) {}
  void touch(int64_t extra, const std::string& where) {
    if (live_ + extra > peak_) {
      peak_ = live_ + extra;
      where_ = where;
    }
    if (trace_) trace_->push_back({where, live_ + extra, live_});
  }
  void add(int64_t b) {
    live_ += b;
    if (trace_ && !trace_->empty()) trace_->back().after = live_;
  }
  int64_t live() const { return live_; }
  int64_t peak() const { return peak_; }
  const std::string& where() const { return where_; }

 private:
  int64_t live_ = 0, peak_ = 0;
  std::string where_;
  std::vector<TracePoint>* trace_;
};

// Forward with grad over [first, last]; the input of `first` is already live.
void forward_with_grad(const std::vector<LayerMemory>& L, size_t first, size_t last, Live& m, const char* phase) {
  for (size_t i = first; i <= last; ++i) {
    const LayerMemory& l = L[i];
    m.touch(l.saved + l.out + l.forward_extra, std::string(phase) + l.name);
    m.add(l.saved + l.out);
    if (!l.saves_input && i != first) m.add(-l.in);
  }
}

}  // namespace

std::vector<Segment> checkpoint_segments(const std::vector<LayerMemory>& layers,
                                         std::optional<config::CheckpointLevel> level) {
  std::vector<Segment> out;
  if (!level) return out;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerMemory& l = layers[i];
    if (level == config::CheckpointLevel::Block && l.block) out.push_back({i, i});
    if (level == config::CheckpointLevel::Stage && l.stage >= 0 && l.stage <= 3) {
      if (!out.empty() && out.back().last + 1 == i && layers[out.back().first].stage == l.stage)
        out.back().last = i;
      else
        out.push_back({i, i});
    }
  }
  return out;
}

StepPeak simulate_step(const std::vector<LayerMemory>& L, const std::vector<Segment>& segments, int64_t inputs,
                       std::vector<TracePoint>* trace) {
  Live m(inputs, trace);
  m.touch(0, "forward");
  std::vector<int> seg_at(L.size(), -1);
  for (size_t s = 0; s < segments.size(); ++s)
    for (size_t i = segments[s].first; i <= segments[s].last; ++i) seg_at[i] = static_cast<int>(s);

  // Forward.
  for (size_t i = 0; i < L.size();) {
    if (seg_at[i] >= 0) {
      const Segment& s = segments[static_cast<size_t>(seg_at[i])];
      for (size_t k = s.first; k <= s.last; ++k) {  // no grad: nothing saved, the input stays (checkpoint keeps it)
        m.touch(L[k].out + L[k].nograd_extra, "forward of " + L[k].name);
        m.add(L[k].out);
        if (k != s.first) m.add(-L[k].in);
      }
      i = s.last + 1;
    } else {
      forward_with_grad(L, i, i, m, "forward of ");
      if (!L[i].saves_input) m.add(-L[i].in);
      ++i;
    }
  }
  StepPeak r;
  r.forward_peak = m.peak();
  m.add(-L.back().out);  // logits: a few bytes, gone into the loss
  r.saved_at_backward = m.live();

  // Backward.
  int64_t g = 0;  // gradient of the current layer's output
  for (size_t i = L.size(); i-- > 0;) {
    const LayerMemory& l = L[i];
    if (seg_at[i] < 0) {
      m.touch(l.backward_extra, "backward of " + l.name);
      m.add(-l.saved - (l.saves_input ? l.in : 0) + l.in_grad - g);
      g = l.in_grad;
      continue;
    }
    const Segment& s = segments[static_cast<size_t>(seg_at[i])];
    forward_with_grad(L, s.first, s.last, m, "recompute of ");  // output y is held meanwhile
    int64_t gi = g;
    for (size_t k = s.last + 1; k-- > s.first;) {
      const LayerMemory& lk = L[k];
      m.touch(lk.backward_extra, "backward of " + lk.name + " (recompute)");
      m.add(-lk.saved - (lk.saves_input && k != s.first ? lk.in : 0) + lk.in_grad - (k == s.last ? 0 : gi));
      gi = lk.in_grad;
    }
    m.add(-L[s.last].out - L[s.first].in - g);  // recomputed output, the kept input, the incoming gradient
    g = gi;
    i = s.first;
  }
  r.peak = m.peak();
  r.where = m.where();
  return r;
}

}  // namespace halo::memory
