// ZeRO over the world: the parameters live in flat buckets (GradSync's order), each split into
// one equal chunk per rank; a rank updates only its chunks and all-gathers the rest (stage 3:
// a streamed unit's buckets only while it runs).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "parallel/Communicator.h"
#include "parallel/GradSync.h"
#include "parallel/Mesh.h"

namespace halo::parallel {

class ShardedState {
 public:
  // Elements [begin, begin + length) of parameter `param` (flattened) sit at offset `at` of
  // this rank's chunk of the bucket.
  struct Piece {
    size_t param = 0;
    int64_t begin = 0, length = 0, at = 0;
  };
  struct Bucket {
    at::Tensor flat;              // the parameters' storage: each parameter is a view of it
    int64_t chunk = 0;            // elements per rank (the last chunk ends in zero padding)
    std::vector<size_t> params;   // indices into the parameter list
    std::vector<int64_t> offset;  // each one's first element in `flat`
    std::vector<double> scale;    // each one's gradient pre-scale (gradient_scale)
    std::vector<Piece> pieces;    // this rank's chunk, parameter by parameter
    int unit = -1;                // streamed: index into units(); -1: whole on every rank
    at::Tensor owned;             // streamed: this rank's chunk, kept while `flat` has no storage
  };

  // Moves every parameter that needs a gradient into the flat buckets (their values kept;
  // the tensors stay the same objects, so modules, optimizers and checkpoints see them).
  // unit_of (ZeRO's weights stage): per parameter, the unit it streams with ("" or no list:
  // whole on every rank); a unit's parameters get buckets of their own, and their whole
  // values exist only between gather(unit) and release(unit).
  ShardedState(NamedParams params, const std::function<GradPlacement(const std::string&)>& placement,
               std::shared_ptr<Mesh> mesh, size_t bucket_bytes = 25u << 20,
               const std::vector<std::string>& unit_of = {});
  ~ShardedState();
  ShardedState(const ShardedState&) = delete;
  ShardedState& operator=(const ShardedState&) = delete;

  const std::vector<Bucket>& buckets() const { return buckets_; }
  const NamedParams& params() const { return params_; }
  // This rank's chunk: a view of the storage (a streamed bucket's own copy).
  at::Tensor owned_parameters(size_t bucket) const;

  // ZeRO's weights stage, collective per unit (every rank gathers the same units in the same
  // order): all-gathers a unit's buckets into their storage on the first of nested gathers,
  // frees the storage when the last is released. An unknown unit is none of this state's.
  const std::vector<std::string>& units() const { return units_; }
  void gather(const std::string& unit);
  void release(const std::string& unit);
  // Starts the all-gather of a unit not gathered now without waiting for it (counted as one
  // gather): the next gather(unit) waits for it and takes that count over.
  void prefetch(const std::string& unit);
  // The unit before or after `unit` in the parameters' order (the forward's); none at either end.
  std::optional<std::string> neighbour(const std::string& unit, int step) const;
  void release_all();  // whatever a backward left gathered (a graph dropped half-way)
  // Every unit gathered while it lives (a checkpoint's save or load, pretrained weights): on
  // leaving, this rank's chunk of what was written into the whole weights is kept.
  class Whole {
   public:
    explicit Whole(ShardedState& s);
    ~Whole();
    Whole(const Whole&) = delete;
    Whole& operator=(const Whole&) = delete;

   private:
    ShardedState& s_;
  };

  // After backward, one bucket at a time: the pre-scaled gradients reduce-scattered over the
  // world into this rank's chunks; `free_gradients` drops each parameter's .grad once it is packed.
  std::vector<at::Tensor> reduce_scatter_gradients(bool free_gradients);
  // The same inside the next backward: once the last gradient of a bucket is accumulated, the
  // bucket is packed (its whole gradients let go) and reduce-scattered, from the last bucket
  // to the first (the order backward completes them, the same on every rank; a bucket done
  // early waits for those before it). finish_overlap() syncs what backward left (parameters
  // that got no gradient) and returns this rank's chunks, as reduce_scatter_gradients(true).
  void arm_overlap();
  std::vector<at::Tensor> finish_overlap();
  // Gradients already summed on every rank (GradSync): this rank's chunks, copied out.
  std::vector<at::Tensor> owned_gradients() const;
  // Every rank's updated chunk into every rank's parameters.
  void all_gather_parameters();

  // Per-chunk state (one tensor per bucket, chunk-sized) gathered into one whole tensor per
  // parameter of the list (undefined for those outside the buckets): collective.
  std::vector<at::Tensor> gather_whole(const std::vector<at::Tensor>& chunks) const;
  // This rank's chunks cut from whole per-parameter tensors (the inverse, no communication);
  // an undefined tensor leaves its pieces zero.
  std::vector<at::Tensor> chunks_of(const std::vector<at::Tensor>& whole) const;

 private:
  NamedParams params_;
  std::shared_ptr<Mesh> mesh_;
  std::vector<Bucket> buckets_;
  std::vector<std::string> units_;
  std::vector<std::vector<size_t>> unit_buckets_;  // per unit
  std::vector<int> gathered_;                      // per unit: nested gathers
  std::vector<std::vector<Pending>> prefetched_;   // per unit: its buckets' all-gathers in flight
  // units_ from unit_of; per parameter, its index there (-1: whole everywhere; empty: no units).
  std::vector<int> index_units(const std::vector<std::string>& unit_of);
  std::optional<size_t> find_unit(const std::string& unit) const;
  void wait_prefetch(size_t u);

  at::Tensor reduce_scatter_bucket(size_t b, bool free_gradients);
  Pending materialize(Bucket& b);    // storage back, all-gathered from every rank's owned chunk
  static void drop(Bucket& b);       // storage freed (the parameters' views keep their shapes)
  void gradient_made(size_t param);  // a parameter's gradient is accumulated (armed: its bucket may go)
  struct Overlap;
  friend struct OverlapHook;
  std::shared_ptr<Overlap> overlap_;  // shared with the parameters' post-accumulate hooks
};

}  // namespace halo::parallel
