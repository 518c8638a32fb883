// The measured within-step memory timeline: while a probe is open, the model reports each
// layer's output; the probe reads live bytes then, and again when that layer's backward is done.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace halo::model {

struct ProbePoint {
  std::string where;  // "forward of stages.0.blocks.2", "backward of stem", the trainer's own ("optimizer step")
  int64_t high = 0;   // the most bytes live since the previous point
  int64_t after = 0;  // live when it was taken
};

class LayerProbe {
 public:
  struct Reading {
    int64_t current = 0;  // bytes live now
    int64_t high = 0;     // the most live since the previous reading (the sampler resets it)
  };
  using Sampler = std::function<Reading()>;

  // Opens the probe: until it is destroyed, layer_done() of the model reports to it (one open
  // probe per process). `sample` is read at every point.
  explicit LayerProbe(Sampler sample);
  ~LayerProbe();
  LayerProbe(const LayerProbe&) = delete;
  LayerProbe& operator=(const LayerProbe&) = delete;

  // Called by the model after each layer of the forward (a no-op when no probe is open): records
  // "forward of <layer>" and hooks its output: once that gradient is complete, the next layer's
  // backward has run ("backward of <next layer>"). Ignored during backward (a recompute).
  static void layer_done(const std::string& layer, const at::Tensor& out);
  // A layer group ran without grad and `out` is its output as the graph sees it (a checkpointed
  // stage): hooked as the last reported layer's output.
  static void output_is(const at::Tensor& out);

  void begin_backward();                // forward is over: outputs seen from now on are recomputed
  void mark(const std::string& where);  // a point of the caller's own (after backward: "optimizer step")
  // Backward is over: records "backward of <first layer>" (its input has no gradient to hook);
  // the model reports no more (mark() still records).
  void end_backward();
  std::vector<ProbePoint> points() const;

  struct State;  // opaque: the open probe's points, shared with the gradient hooks

 private:
  std::shared_ptr<State> s_;  // shared with the gradient hooks
};

}  // namespace halo::model
