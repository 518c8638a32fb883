// The OpenLane-V2 baseline after its backbone, for the planner: the FPN neck on stripes, the
// gather, the IPM view transform, the DETR lane and TE heads, the topology heads and the loss.
#pragma once

#include <cstdint>
#include <vector>

#include "arch/Layer.h"
#include "memory/ActivationModel.h"

namespace halo::memory {

// The baseline's sizes (model::OpenLaneBaselineOptions' defaults; `dim` is model.dim).
struct OpenLaneDims {
  int64_t dim = 128;
  int64_t lane_queries = 50, te_queries = 30, te_classes = 13;
  int64_t control_points = 5;
  int64_t heads = 8, ffn = 512, topology_layers = 3;
  int64_t bev_x = 100, bev_y = 50, bev_z = 10;  // BevGrid's cells: 1 m over [-50, 50] x [-25, 25], 0.5 m over [-3, 2]
};

// Every parameter after the backbone, in named_parameters() order, with the model's names:
// "img_neck.lateral_convs.0.weight", ..., "lcte_head.classifier.4.bias". c16, c32: the
// backbone's channels at strides 16 and 32 (its stages 2 and 3).
std::vector<arch::Parameter> openlane_head_parameters(const OpenLaneDims& d, int64_t c16, int64_t c32);

// The neck and heads as one layer (name "neck_and_heads", stage 4) on one rank: its input is
// the backbone's last output (stride 32, this rank's stripe); the stride-16 stripe `s16` (the
// last layer of stage 2, which the next downsample keeps anyway) is read too. Everything after
// the gather is the same on every rank. Its output is the loss (a scalar).
// batch: samples per step (in.images / batch views each).
LayerMemory openlane_heads_layer(const OpenLaneDims& d, int64_t batch, const LayerMemory& s16, const LayerMemory& s32,
                                 const ActivationInput& in);

}  // namespace halo::memory
