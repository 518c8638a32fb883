// The replays count live bytes as LibTorch frees them: a tensor lives while the layer's code
// or a saving op holds it; a gradient while an op still has to consume it.
#include "memory/LayerTape.h"

#include <algorithm>
#include <stdexcept>

namespace halo::memory {

LayerTape::LayerTape(int64_t input_bytes, bool needs_grad) {
  tensors_.push_back({input_bytes, -1, needs_grad});
  dropped_at_.push_back(-1);
}

LayerTape::Id LayerTape::op(Op o) {
  for (Id r : o.reads)
    if (r < 0 || r >= static_cast<Id>(tensors_.size())) throw std::logic_error("LayerTape: op reads an unknown tensor");
  if (o.in_grads.empty())
    for (Id r : o.reads) o.in_grads.push_back(tensors_[static_cast<size_t>(r)].bytes);
  bool grad = o.params;
  for (Id r : o.reads) grad = grad || tensors_[static_cast<size_t>(r)].grad;
  tensors_.push_back({o.out, static_cast<int>(ops_.size()), grad});
  dropped_at_.push_back(-1);
  ops_.push_back(std::move(o));
  return static_cast<Id>(tensors_.size() - 1);
}

void LayerTape::drop(Id t) { dropped_at_.at(static_cast<size_t>(t)) = static_cast<int>(ops_.size()); }

namespace {

struct Counter {
  int64_t live = 0, peak = 0;
  void add(int64_t b) {
    live += b;
    peak = std::max(peak, live);
  }
  void touch(int64_t extra) { peak = std::max(peak, live + extra); }
};

}  // namespace

void LayerTape::Replay::apply_to(LayerMemory& l) const {
  l.in = in;
  l.out = out;
  l.saves_input = saves_input;
  l.keeps_output = keeps_output;
  l.saved = saved;
  l.forward_extra = forward_extra;
  l.nograd_extra = nograd_extra;
  l.backward_extra = backward_extra;
  l.recompute_backward_extra = recompute_backward_extra;
  l.new_grads_extra = new_grads_extra;
  l.new_grads_recompute_extra = new_grads_recompute_extra;
  l.in_grad = in_grad;
}

LayerTape::Replay LayerTape::replay(Id output, int64_t out_grad) const {
  const size_t n = tensors_.size(), out_id = static_cast<size_t>(output);
  Replay r;
  r.in = tensors_[0].bytes;
  r.out = tensors_.at(out_id).bytes;
  // Who holds each tensor at the end of forward (with grad): the code (input, output) or autograd.
  std::vector<int> saved_by(n, 0);
  for (size_t k = 0; k < ops_.size(); ++k) {
    for (Id s : ops_[k].saves) ++saved_by[static_cast<size_t>(s)];
    if (ops_[k].saves_result) ++saved_by[k + 1];
  }
  auto held_by_code = [&](size_t t, size_t ops_done) {
    if (t == 0 || t == out_id) return true;
    return dropped_at_[t] < 0 ? ops_done < ops_.size() : static_cast<size_t>(dropped_at_[t]) > ops_done;
  };

  // Forward, with and without grad.
  for (const bool grad : {true, false}) {
    Counter m;
    m.add(r.in);
    std::vector<int> saves(n, 0);
    std::vector<bool> live(n, false);
    live[0] = true;
    for (size_t k = 0; k < ops_.size(); ++k) {
      const Op& o = ops_[k];
      m.touch(o.out + o.keeps + o.extra);
      m.add(o.out + (grad ? o.keeps : 0));
      live[k + 1] = true;
      if (grad) {
        for (Id s : o.saves) ++saves[static_cast<size_t>(s)];
        if (o.saves_result) ++saves[k + 1];
      }
      for (size_t t = 1; t < n && t <= k + 1; ++t)
        if (live[t] && saves[t] == 0 && !held_by_code(t, k + 1)) {
          live[t] = false;
          m.add(-tensors_[t].bytes);
        }
    }
    if (grad) {
      r.saved = m.live - r.in - r.out;
      r.forward_extra = m.peak - m.live;
    } else {
      r.nograd_extra = m.peak - r.in - r.out;
    }
  }
  r.saves_input = saved_by[0] > 0;
  r.keeps_output = saved_by[out_id] > 0;

  const int64_t g = out_grad < 0 ? r.out : out_grad;
  const auto [extra, in_grad] = backward(output, g, saved_by, false, false);
  r.backward_extra = extra;
  r.in_grad = in_grad;
  r.recompute_backward_extra = backward(output, g, saved_by, true, false).first;
  r.new_grads_extra = backward(output, g, saved_by, false, true).first - r.backward_extra;
  r.new_grads_recompute_extra = backward(output, g, saved_by, true, true).first - r.recompute_backward_extra;
  return r;
}

std::pair<int64_t, int64_t> LayerTape::backward(Id output, int64_t out_grad, const std::vector<int>& saved_by,
                                                bool hold_output, bool new_grads) const {
  const size_t n = tensors_.size(), out_id = static_cast<size_t>(output);
  // Gradient buffers are shared when an op passes its result's gradient on.
  struct Buf {
    int64_t bytes = 0;
    int refs = 0;
  };
  std::vector<Buf> bufs;
  std::vector<int> pending(n, -1);
  std::vector<int> saves = saved_by;
  if (hold_output) ++saves[out_id];  // a recomputation's caller holds its output (and gradient) throughout
  Counter m;
  for (size_t t = 0; t < n; ++t)
    if (saves[t] > 0) m.add(tensors_[t].bytes);
  for (const Op& o : ops_) m.add(o.keeps);
  bufs.push_back({out_grad, hold_output ? 2 : 1});  // the caller holds the gradient it passed in too
  pending[out_id] = 0;
  m.add(bufs.back().bytes);
  const int64_t start = m.live;
  auto release_buf = [&](int b) {
    if (--bufs[static_cast<size_t>(b)].refs == 0) m.add(-bufs[static_cast<size_t>(b)].bytes);
  };
  auto release_saved = [&](size_t t) {
    if (--saves[t] == 0) m.add(-tensors_[t].bytes);
  };
  for (size_t k = ops_.size(); k-- > 0;) {
    const Op& o = ops_[k];
    const int g = pending[k + 1];
    if (g < 0) continue;  // its result gets no gradient: the node never runs
    std::vector<int> made;
    for (size_t j = 0; j < o.reads.size(); ++j) {
      const auto t = static_cast<size_t>(o.reads[j]);
      if (!tensors_[t].grad) {
        made.push_back(-1);
      } else if (o.passes_grad) {
        ++bufs[static_cast<size_t>(g)].refs;
        made.push_back(g);
      } else {
        bufs.push_back({o.in_grads[j], 1});
        m.add(o.in_grads[j]);
        made.push_back(static_cast<int>(bufs.size() - 1));
      }
    }
    m.touch(o.grad_extra);
    if (new_grads) m.add(o.kept_grads);  // beside the ops after it in backward
    pending[k + 1] = -1;
    release_buf(g);
    for (Id s : o.saves) release_saved(static_cast<size_t>(s));
    if (o.saves_result) release_saved(k + 1);
    m.add(-o.keeps);
    for (size_t j = 0; j < o.reads.size(); ++j) {
      if (made[j] < 0) continue;
      int& p = pending[static_cast<size_t>(o.reads[j])];
      if (p < 0) {
        p = made[j];
      } else if (bufs[static_cast<size_t>(p)].refs == 1) {  // added into the first, in place
        release_buf(made[j]);
      } else {  // the first is shared: their sum is a new tensor
        bufs.push_back({bufs[static_cast<size_t>(p)].bytes, 1});
        m.add(bufs.back().bytes);
        release_buf(p);
        release_buf(made[j]);
        p = static_cast<int>(bufs.size() - 1);
      }
    }
  }
  return {m.peak - start, pending[0] >= 0 ? bufs[static_cast<size_t>(pending[0])].bytes : 0};
}

}  // namespace halo::memory
