// A model variant's layers in forward order, as data: what the model builds, the pre-launch
// check walks, the memory planner prices and the workbench shows. Built by a family's table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/Layer.h"
#include "shard/ShardingCheck.h"

namespace halo::arch {

class LayerList {
 public:
  LayerList() = default;
  explicit LayerList(std::vector<Layer> layers) : layers_(std::move(layers)) {}

  const std::vector<Layer>& layers() const { return layers_; }
  auto begin() const { return layers_.begin(); }
  auto end() const { return layers_.end(); }
  size_t size() const { return layers_.size(); }
  const Layer& operator[](size_t i) const { return layers_.at(i); }

  int stage_count() const;  // stages between stem and head
  int64_t parameter_count() const;
  std::vector<Parameter> parameters() const;  // every tensor, in named_parameters() order
  Parameter largest_parameter() const;        // the first with the most elements; util::Error when none
  // Per name, the block layer that lists it ("stages.2.blocks.5"; "" outside every block):
  // ZeRO's weights stage streams a block's parameters as one unit. prefix: what the names
  // carry before the layer list's own ("backbone." inside the OpenLane-V2 model).
  std::vector<std::string> block_of(const std::vector<std::string>& names, const std::string& prefix = "") const;
  // Per name, the index of the layer that lists it (-1: none, e.g. OpenLane-V2's neck and
  // heads): the gradient sync's buckets hold whole layers.
  std::vector<int> layer_of(const std::vector<std::string>& names, const std::string& prefix = "") const;
  // Every op of a main path that reads across W, in order, named as the model's module
  // ("stem.0", "maxpool"): what the shardability check walks.
  std::vector<shard::LayerWindow> windows() const;

 private:
  std::vector<Layer> layers_;
};

}  // namespace halo::arch
