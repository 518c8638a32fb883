// Live bytes follow the engine: a layer frees its input after forward unless it keeps it;
// backward frees each layer's saved tensors once it ran; a checkpointed segment keeps its
// input, recomputes itself with grad inside backward and holds its output meanwhile; a
// layer's parameter gradients stay once its backward made them. At a layer's own high point:
// a plain layer's (one op) are counted, a ConvNeXt block's are not (its peak, in the pointwise
// backward, comes before its weight gradients: measured to the byte on the quickstart, none and
// tp2), unless it is recomputed (its recompute's high point, the depthwise conv, comes after);
// a ResNet or RegNet block's are not, recomputed or not (its last conv's weight gradient first).
#include "memory/StepSimulator.h"

#include <algorithm>
#include <optional>

namespace halo::memory {

namespace {

class Live {
 public:
  Live(int64_t start, std::vector<TracePoint>* trace) : live_(start), trace_(trace) {}
  // extra: above the live bytes at this high point, of which grad_extra are parameter gradients.
  void touch(int64_t extra, const std::string& where, int64_t grad_extra = 0) {
    if (live_ + extra > peak_) {
      peak_ = live_ + extra;
      peak_grads_ = grads_ + grad_extra;
      where_ = where;
    }
    if (trace_) trace_->push_back({where, live_ + extra, live_});
  }
  void add(int64_t b) {
    live_ += b;
    if (trace_ && !trace_->empty()) trace_->back().after = live_;
  }
  void add_grads(int64_t b) {  // parameter gradients a backward made (and kept)
    add(b);
    grads_ += b;
  }
  int64_t live() const { return live_; }
  int64_t peak() const { return peak_; }
  int64_t peak_grads() const { return peak_grads_; }
  const std::string& where() const { return where_; }

 private:
  int64_t live_ = 0, peak_ = 0, grads_ = 0, peak_grads_ = 0;
  std::string where_;
  std::vector<TracePoint>* trace_;
};

// Forward with grad over [first, last]; the input of `first` is already live. An input the
// layer before keeps (its last ReLU's result) stays until that layer's backward.
// recompute: a recomputation, where a segment of one block (whose output nothing reads) has
// its own transient.
// ZeRO's weights stage: the streamed layers' whole weights as the gate holds them.
class Streamed {
 public:
  Streamed(const std::vector<LayerMemory>& L, bool prefetch) : L_(L), prefetch_(prefetch) {}
  // Layer i gathers its weights (unless a prefetch brought them); with prefetch, also the
  // next streamed layer in direction `dir` (+1 forward, -1 backward).
  void gather(size_t i, int dir, Live& m, bool may_prefetch = true) {
    if (L_[i].gathered == 0) return;
    if (prefetched_ == i)
      prefetched_.reset();
    else
      m.add(L_[i].gathered);
    if (!prefetch_ || !may_prefetch) return;
    for (auto k = static_cast<int64_t>(i) + dir; k >= 0 && k < static_cast<int64_t>(L_.size()); k += dir)
      if (L_[static_cast<size_t>(k)].gathered > 0) {
        prefetched_ = static_cast<size_t>(k);
        m.add(L_[*prefetched_].gathered);
        return;
      }
  }
  void release(size_t i, Live& m) { m.add(-L_[i].gathered); }

 private:
  const std::vector<LayerMemory>& L_;
  bool prefetch_;
  std::optional<size_t> prefetched_;
};

// gather: each layer gathers its streamed weights around its own forward (a block
// checkpointed alone has them from its backward's gather instead; a recompute prefetches none).
// first_as: the first layer as it runs here (a block's recompute from its input's cast).
void forward_with_grad(const std::vector<LayerMemory>& L, size_t first, size_t last, Live& m, Streamed& w,
                       const char* phase, bool recompute = false, bool gather = true,
                       const LayerMemory* first_as = nullptr) {
  for (size_t i = first; i <= last; ++i) {
    const LayerMemory& l = i == first && first_as ? *first_as : L[i];
    const bool alone = recompute && first == last && l.block && l.recompute_forward_extra;
    if (gather) w.gather(i, +1, m, !recompute);
    m.touch(l.saved + l.out + (alone ? *l.recompute_forward_extra : l.forward_extra), std::string(phase) + l.name);
    m.add(l.saved + l.out);
    if (!l.saves_input && i != first && !L[i - 1].keeps_output) m.add(-l.in);
    if (gather) w.release(i, m);
  }
}

// Layer i as a checkpoint of it alone runs it in backward: from its input's cast where it has
// one (its own parameter gradients and gathered weights), else itself.
std::optional<LayerMemory> recomputed_from_cast(const LayerMemory& l) {
  if (!l.on_cast_input) return std::nullopt;
  LayerMemory r = *l.on_cast_input;
  r.param_grad = l.param_grad;
  r.gathered = l.gathered;
  return r;
}

// The buckets of a BucketSync as backward completes them.
class Buckets {
 public:
  explicit Buckets(const BucketSync* s) : s_(s) {
    if (!s_) return;
    remaining_.assign(s_->flat.size(), 0);
    grads_.assign(s_->flat.size(), 0);
    for (const auto& layer : s_->layer_grads)
      for (const auto& [b, bytes] : layer) {
        ++remaining_.at(b);
        grads_.at(b) += bytes;
      }
    done_.assign(s_->flat.size(), false);
    next_ = static_cast<int64_t>(s_->flat.size()) - 1;
  }
  // Layer i's backward made its gradients: the buckets it completes go, in order.
  void layer_done(size_t i, Live& m) {
    if (!s_ || i >= s_->layer_grads.size()) return;
    for (const auto& [b, bytes] : s_->layer_grads[i])
      if (--remaining_[b] == 0) done_[b] = true;
    for (; next_ >= 0 && done_[static_cast<size_t>(next_)]; --next_) {
      const auto b = static_cast<size_t>(next_);
      const int64_t flat = s_->flat[b];
      if (s_->all_reduce) {
        m.touch(flat, "gradient all-reduce in backward", flat);  // the copy beside every gradient
        m.add_grads(flat - grads_[b]);                           // then in their place
        continue;
      }
      const int64_t chunk = s_->chunk[b];
      m.touch(flat, "gradient reduce-scatter in backward", flat);  // the copy beside every gradient
      m.touch(flat + chunk - grads_[b], "gradient reduce-scatter in backward", flat + chunk - grads_[b]);
      m.add_grads(chunk - grads_[b]);
    }
  }

 private:
  const BucketSync* s_;
  std::vector<int64_t> remaining_, grads_;
  std::vector<bool> done_;
  int64_t next_ = -1;
};

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
                       std::vector<TracePoint>* trace, const BucketSync* sync, bool prefetch) {
  Live m(inputs, trace);
  Buckets buckets(sync);
  Streamed w(L, prefetch);
  m.touch(0, "forward");
  std::vector<int> seg_at(L.size(), -1);
  for (size_t s = 0; s < segments.size(); ++s)
    for (size_t i = segments[s].first; i <= segments[s].last; ++i) seg_at[i] = static_cast<int>(s);
  // Layer i's input is the output layer i-1 ran with grad and keeps: freed in that one's backward.
  auto held_by_previous = [&](size_t i) { return i > 0 && seg_at[i - 1] < 0 && L[i - 1].keeps_output; };

  // Forward.
  for (size_t i = 0; i < L.size();) {
    if (seg_at[i] >= 0) {
      const Segment& s = segments[static_cast<size_t>(seg_at[i])];
      for (size_t k = s.first; k <= s.last; ++k) {  // no grad: nothing saved, the input stays (checkpoint keeps it)
        // ... or only its cast does, made before the block and kept (x itself goes after the sum)
        const int64_t cast = s.first == s.last && L[k].on_cast_input ? L[k].on_cast_input->in : 0;
        w.gather(k, +1, m);
        m.touch(L[k].out + L[k].nograd_extra + cast, "forward of " + L[k].name);
        m.add(L[k].out + cast - (cast > 0 ? L[k].in : 0));
        if (k != s.first) m.add(-L[k].in);
        w.release(k, m);
      }
      i = s.last + 1;
    } else {
      forward_with_grad(L, i, i, m, w, "forward of ");
      if (i > 0 && !L[i].saves_input && !held_by_previous(i)) m.add(-L[i].in);  // the caller holds the first's
      ++i;
    }
  }
  StepPeak r;
  r.forward_peak = m.peak();
  m.touch(0, "loss");    // the task's loss; forward returns
  m.add(-L.back().out);  // logits: a few bytes, gone into the loss
  // The caller lets go of its inputs; the first layer's stays while that layer keeps it.
  m.add(-(inputs - (L.front().saves_input ? L.front().in : 0)));
  r.saved_at_backward = m.live();

  // Backward.
  int64_t g = 0;  // gradient of the current layer's output
  for (size_t i = L.size(); i-- > 0;) {
    const LayerMemory& l = L[i];
    if (seg_at[i] < 0) {
      const int64_t made = l.block ? 0 : l.param_grad;
      w.gather(i, -1, m);
      const int64_t grads_kept = l.block && l.param_grad > 0 ? l.new_grads_extra : 0;
      m.touch(l.backward_extra + grads_kept + made, "backward of " + l.name, made + grads_kept);
      m.add(-l.saved - (l.saves_input && !held_by_previous(i) ? l.in : 0) + l.in_grad - g -
            (l.keeps_output ? l.out : 0));
      m.add_grads(l.param_grad);
      buckets.layer_done(i, m);
      w.release(i, m);
      g = l.in_grad;
      continue;
    }
    const Segment& s = segments[static_cast<size_t>(seg_at[i])];
    // One layer checkpointed alone is gathered (outside its checkpoint) through recompute and
    // backward; a longer segment's layers gather inside it, in each pass.
    const bool alone = s.first == s.last;
    const std::optional<LayerMemory> from_cast = alone ? recomputed_from_cast(L[s.first]) : std::nullopt;
    const LayerMemory* first_as = from_cast ? &*from_cast : nullptr;
    if (alone) w.gather(s.first, -1, m);
    // output y is held meanwhile
    forward_with_grad(L, s.first, s.last, m, w, "recompute of ", true, !alone, first_as);
    int64_t gi = g;
    for (size_t k = s.last + 1; k-- > s.first;) {
      const LayerMemory& lk = k == s.first && first_as ? *first_as : L[k];
      // From a cast: its gradient (the cast's dtype) is cast back to the stream's beside it.
      const int64_t in_grad = k == s.first && first_as ? L[k].in_grad : lk.in_grad;
      const int64_t cast_back = in_grad != lk.in_grad ? -lk.saved + lk.in_grad + in_grad : 0;
      const bool last = k == s.last;
      const bool in_held = k == s.first || L[k - 1].keeps_output;  // by the checkpoint, or the layer before
      if (!alone) w.gather(k, -1, m);
      const int64_t made = lk.block && !lk.recompute_peaks_after_grads ? 0 : lk.param_grad;
      const int64_t grads_kept =
          lk.block && lk.param_grad > 0 ? (last ? lk.new_grads_recompute_extra : lk.new_grads_extra) : 0;
      const int64_t before = std::max((last ? lk.recompute_backward_extra : lk.backward_extra) + grads_kept, cast_back);
      m.touch(lk.after_grads_extra && last ? std::max(before, *lk.after_grads_extra + std::max(made, lk.returned_grads))
                                           : before + made,
              "backward of " + lk.name + " (recompute)", made + grads_kept);
      m.add(-lk.saved - (lk.saves_input && !in_held ? lk.in : 0) + in_grad - (last ? 0 : gi) -
            (lk.keeps_output && !last ? lk.out : 0));
      m.add_grads(lk.param_grad);
      buckets.layer_done(k, m);
      w.release(k, m);
      gi = in_grad;
    }
    // The recomputed output, the kept input or its cast (unless the layer before still keeps
    // it), the incoming gradient.
    const int64_t kept = first_as ? first_as->in : L[s.first].in;
    m.add(-L[s.last].out - (held_by_previous(s.first) ? 0 : kept) - g);
    g = gi;
    i = s.first;
  }
  r.peak = m.peak();
  r.grads_at_peak = m.peak_grads();
  r.where = m.where();
  return r;
}

}  // namespace halo::memory
