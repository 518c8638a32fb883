// One layer's ops as LibTorch's autograd runs them on one rank, replayed for the planner:
// what each op makes and keeps, when the layer's code lets go of a tensor, what backward adds.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "memory/ActivationModel.h"

namespace halo::memory {

// A layer recorded op by op (forward order), then replayed three ways: forward with grad,
// forward without grad (a checkpointed segment), backward. Backward runs the ops in reverse
// (autograd's order for a layer's chain: the latest node first); each frees what it saved
// and the gradient of its result once done, and passes gradients to its inputs (a second
// gradient for one tensor is added into the first, in place).
class LayerTape {
 public:
  using Id = int;

  // The layer's input: `bytes` as it arrives; `needs_grad`: its gradient is computed.
  explicit LayerTape(int64_t input_bytes, bool needs_grad = true);
  static constexpr Id input() { return 0; }

  struct Op {
    std::string name;               // "conv1", "bn1", "relu" (for reading a replay)
    std::vector<Id> reads;          // tensors it differentiates to, in order
    int64_t out = 0;                // bytes of its result (a new tensor)
    std::vector<Id> saves;          // existing tensors autograd keeps for its backward
    bool saves_result = false;      // autograd keeps its result (ReLU, sigmoid)
    int64_t keeps = 0;              // new tensors kept for backward besides (stats, indices, a padded copy)
    int64_t extra = 0;              // transient above result + keeps while it runs
    int64_t grad_extra = 0;         // transient of its backward above the input gradients (weight grads)
    bool passes_grad = false;       // backward hands the result's gradient on as it is (add, a view)
    std::vector<int64_t> in_grads;  // bytes of each read's gradient (default: the read's bytes)
    bool params = false;            // it has trainable parameters: its result needs a gradient
    int64_t kept_grads = 0;         // parameter gradients its backward makes, kept after it
  };
  Id op(Op o);      // its result is held by the layer's code until drop()
  void drop(Id t);  // the layer's code lets go of t
  // Whether backward computes a gradient for t (the input as constructed; a result when its
  // op has parameters or reads a tensor that needs one).
  bool needs_grad(Id t) const { return tensors_.at(static_cast<size_t>(t)).grad; }

  struct Replay {
    int64_t in = 0, out = 0;
    int64_t saved = 0;          // new bytes autograd keeps, input and output excluded
    bool saves_input = false;   // autograd keeps the input
    bool keeps_output = false;  // autograd keeps the output (until this layer's backward)
    int64_t forward_extra = 0;  // peak above in + saved + out during forward
    int64_t nograd_extra = 0;   // peak above in + out without grad
    // Peak of backward above what it starts from: saved, the input and output where autograd
    // keeps them, the output's gradient. The recomputation's: its caller holds the output and
    // the gradient it passed in until the whole recomputation is done.
    int64_t backward_extra = 0, recompute_backward_extra = 0;
    // Added to those two when the parameter gradients are new tensors (not summed into
    // existing ones): each op's kept beside the ops after it in backward.
    int64_t new_grads_extra = 0, new_grads_recompute_extra = 0;
    int64_t in_grad = 0;  // bytes of the input's gradient it returns
    // Copies these figures into a layer's LayerMemory (the rest, names and shapes, is the caller's).
    void apply_to(LayerMemory& l) const;
  };
  // out_grad: bytes of the output's gradient as it arrives (-1: the output's bytes; a pooled
  // head hands back an expanded view of a (B, C) gradient).
  Replay replay(Id output, int64_t out_grad = -1) const;

 private:
  struct Tensor {
    int64_t bytes = 0;
    int made_by = -1;  // op index; -1: the input
    bool grad = false;
  };
  // Peak above the start and the input's gradient bytes.
  std::pair<int64_t, int64_t> backward(Id output, int64_t out_grad, const std::vector<int>& saved_by, bool hold_output,
                                       bool new_grads) const;
  std::vector<Tensor> tensors_;
  std::vector<Op> ops_;
  std::vector<int> dropped_at_;  // per tensor: ops recorded before its drop (-1: held to the end)
};

}  // namespace halo::memory
