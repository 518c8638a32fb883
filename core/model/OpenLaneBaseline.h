// The OpenLane-V2 baseline (plugin/mmdet3d/configs/baseline.py) on width-sharded images:
// Backbone (ConvNeXt or ResNet) + FPN (sharded), gather, IPM to BEV, DETR lane and TE heads, topology MLPs.
#pragma once

#include <string>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "model/Backbone.h"
#include "model/DetrHead.h"
#include "model/Fpn.h"
#include "model/IpmViewTransform.h"
#include "model/OpenLaneOutputs.h"
#include "model/TopologyHead.h"

namespace halo::model {

struct OpenLaneBaselineOptions {
  int64_t dim = 128;  // _dim_ of the baseline config
  int64_t lane_queries = 50, te_queries = 30, te_classes = 13;
  int64_t control_points = 5, lane_points = 11;
  int64_t heads = 8, ffn = 512, decoder_layers = 1, topology_layers = 3;
  BevGrid bev;
};

class OpenLaneBaselineImpl : public torch::nn::Module {
 public:
  // backbone: a variant name (arch::backbone_names()), built without its classifier.
  OpenLaneBaselineImpl(const std::string& backbone, OpenLaneBaselineOptions o = {});
  // images (B*V, 3, H, W/world) stripes, view-major per sample (view 0 = front);
  // lidar2img (B, V, 4, 4) ego -> input pixels; image_hw (B, V, 2) valid input size.
  // Outputs are identical on every sp rank.
  OpenLaneOutputs forward(const parallel::ShardedTensor& images, const at::Tensor& lidar2img,
                          const at::Tensor& image_hw);
  // img_backbone.* and img_neck.* see stripes (Partial); the rest replicated data.
  static parallel::GradPlacement placement(const std::string& param_name);
  const OpenLaneBaselineOptions& options() const { return o_; }

  std::shared_ptr<BackboneImpl> img_backbone;
  Fpn img_neck{nullptr};
  IpmViewTransform img_view_transformer{nullptr};
  DetrHead lc_head{nullptr}, te_head{nullptr};
  TopologyHead lclc_head{nullptr}, lcte_head{nullptr};

 private:
  OpenLaneBaselineOptions o_;
};
TORCH_MODULE(OpenLaneBaseline);

}  // namespace halo::model
