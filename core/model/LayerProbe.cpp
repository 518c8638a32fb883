// One open probe per process (an atomic pointer the model reads per layer). Each output gets a
// gradient hook naming the layer after it, read when it fires; the probe holds no tensor, so
// it keeps nothing alive that the step would have freed.
#include "model/LayerProbe.h"

#include <algorithm>
#include <atomic>
#include <mutex>

namespace halo::model {

struct LayerProbe::State : std::enable_shared_from_this<State> {
  Sampler sample;
  std::mutex mutex;
  std::vector<ProbePoint> points;
  std::vector<std::string> layers;  // reported in forward, in order
  bool backward = false, closed = false;
  void record(const std::string& where) {
    const Reading r = sample();
    points.push_back({where, std::max(r.high, r.current), r.current});
  }
  // When the gradient of layer k's output is complete, layer k + 1's backward has run (the
  // last output's gradient comes from the loss: no point).
  void hook(const at::Tensor& out, size_t k) {
    if (!out.requires_grad()) return;
    out.register_hook([state = shared_from_this(), k](const at::Tensor&) {
      const std::lock_guard lock(state->mutex);
      if (!state->closed && k + 1 < state->layers.size()) state->record("backward of " + state->layers[k + 1]);
    });
  }
};

namespace {
std::atomic<LayerProbe::State*> g_open{nullptr};
}  // namespace

LayerProbe::LayerProbe(Sampler sample) : s_(std::make_shared<State>()) {
  s_->sample = std::move(sample);
  s_->sample();  // the window starts here
  g_open.store(s_.get());
}

LayerProbe::~LayerProbe() {
  g_open.store(nullptr);
  const std::lock_guard lock(s_->mutex);
  s_->closed = true;
}

void LayerProbe::layer_done(const std::string& layer, const at::Tensor& out) {
  State* s = g_open.load();
  if (s == nullptr) return;
  const std::lock_guard lock(s->mutex);
  if (s->closed || s->backward) return;  // a checkpointed segment's recompute: its hooks are the forward's
  s->record("forward of " + layer);
  s->layers.push_back(layer);
  s->hook(out, s->layers.size() - 1);
}

void LayerProbe::output_is(const at::Tensor& out) {
  State* s = g_open.load();
  if (s == nullptr) return;
  const std::lock_guard lock(s->mutex);
  if (!s->closed && !s->backward && !s->layers.empty()) s->hook(out, s->layers.size() - 1);
}

void LayerProbe::begin_backward() {
  const std::lock_guard lock(s_->mutex);
  s_->backward = true;
}

void LayerProbe::mark(const std::string& where) {
  const std::lock_guard lock(s_->mutex);
  s_->record(where);
}

void LayerProbe::end_backward() {
  const std::lock_guard lock(s_->mutex);
  if (!s_->layers.empty()) s_->record("backward of " + s_->layers.front());
  g_open.store(nullptr);  // later micro-steps are not probed
}

std::vector<ProbePoint> LayerProbe::points() const {
  const std::lock_guard lock(s_->mutex);
  return s_->points;
}

}  // namespace halo::model
