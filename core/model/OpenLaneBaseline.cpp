// Forward: backbone stages 2 and 3 (strides 16, 32, as the ResNet's out_indices (2, 3)) into
// the FPN on stripes, one all-gather of the stride-16 map, then replicated BEV and heads.
#include "model/OpenLaneBaseline.h"

#include <torch/torch.h>

#include "model/Bezier.h"
#include "parallel/Collectives.h"

namespace halo::model {

OpenLaneBaselineImpl::OpenLaneBaselineImpl(const std::string& backbone, OpenLaneBaselineOptions o) : o_(o) {
  img_backbone = register_module("img_backbone", make_backbone(backbone, 0));
  img_neck = register_module("img_neck", Fpn(img_backbone->stage_channels(2), img_backbone->stage_channels(3), o.dim));
  img_view_transformer = register_module("img_view_transformer", IpmViewTransform(o.dim, o.bev));
  lc_head = register_module("lc_head", DetrHead(DetrHeadOptions{o.dim, o.lane_queries, 1, o.control_points * 3, o.heads,
                                                                o.ffn, o.decoder_layers}));
  te_head = register_module(
      "te_head", DetrHead(DetrHeadOptions{o.dim, o.te_queries, o.te_classes, 4, o.heads, o.ffn, o.decoder_layers}));
  lclc_head = register_module("lclc_head", TopologyHead(o.dim, o.dim, o.topology_layers));
  lcte_head = register_module("lcte_head", TopologyHead(o.dim, o.dim, o.topology_layers));
}

OpenLaneOutputs OpenLaneBaselineImpl::forward(const parallel::ShardedTensor& images, const at::Tensor& lidar2img,
                                              const at::Tensor& image_hw) {
  const int64_t B = lidar2img.size(0), V = lidar2img.size(1);
  auto stages = img_backbone->forward_stages(images);
  parallel::ShardedTensor neck = img_neck->forward(stages[2], stages[3]);  // (B*V, D, H/16, W/16/world)
  at::Tensor feats = parallel::gather_width(neck);                         // (B*V, D, H/16, W/16)
  at::Tensor bev = img_view_transformer->forward(feats, lidar2img, image_hw,
                                                 {images.local.size(2), images.global_width()});  // (B, D, Y, X)
  OpenLaneOutputs out;
  at::Tensor lane_reg;
  std::tie(out.lane_logits, lane_reg, out.lane_embed) = lc_head->forward(bev);
  out.lane_logits = out.lane_logits.squeeze(-1);                                 // (B, Ql)
  out.lane_control = lane_reg.view({B, o_.lane_queries, o_.control_points, 3});  // (B, Ql, 5, 3) in [0, 1]
  const BevGrid& g = o_.bev;
  at::Tensor lo = torch::tensor({g.x[0], g.y[0], g.z[0]}, lane_reg.options());
  at::Tensor span = torch::tensor({g.x[1] - g.x[0], g.y[1] - g.y[0], g.z[1] - g.z[0]}, lane_reg.options());
  out.lane_points = bezier_sample(out.lane_control * span + lo, o_.lane_points);  // (B, Ql, 11, 3) metres
  at::Tensor front = feats.view({B, V, feats.size(1), feats.size(2), feats.size(3)}).select(1, 0);  // (B, D, h, w)
  std::tie(out.te_logits, out.te_boxes, out.te_embed) = te_head->forward(front);
  out.lclc_logits = lclc_head->forward(out.lane_embed, out.lane_embed);  // (B, Ql, Ql)
  out.lcte_logits = lcte_head->forward(out.lane_embed, out.te_embed);    // (B, Ql, Qt)
  return out;
}

parallel::GradPlacement OpenLaneBaselineImpl::placement(const std::string& name) {
  const bool striped = name.rfind("img_backbone.", 0) == 0 || name.rfind("img_neck.", 0) == 0;
  return striped ? parallel::GradPlacement::Partial : parallel::GradPlacement::Replicate;
}

}  // namespace halo::model
