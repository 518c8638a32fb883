// The ResNet (and RegNet) layer lists: timm's names in named_parameters() order, the parameter counts
// timm reports, each block's path of across-W ops, and the strided shortcut landing on the
// stripes of the main path (so the residual add is local) at every sp that shards.
#include <gtest/gtest.h>

#include "arch/Backbones.h"
#include "arch/LayerShapes.h"
#include "arch/ResNetLayers.h"
#include "shard/Partition.h"

namespace halo::arch {
namespace {

TEST(ResNetLayers, ParameterCountsAreTimms) {
  // timm.create_model(name).parameters(), summed (tests/model/ResNetTest checks against timm itself).
  EXPECT_EQ(resnet_layers(*find_resnet_variant("resnet18")).parameter_count(), 11689512);
  EXPECT_EQ(resnet_layers(*find_resnet_variant("resnet34")).parameter_count(), 21797672);
  EXPECT_EQ(resnet_layers(*find_resnet_variant("resnet50")).parameter_count(), 25557032);
  EXPECT_EQ(resnet_layers(*find_resnet_variant("resnet101")).parameter_count(), 44549160);
  EXPECT_EQ(backbone_layers("regnety_008")->parameter_count(), 6263168);
}

TEST(ResNetLayers, NamesAndKindsFollowTimm) {
  const LayerList l = resnet_layers(*find_resnet_variant("resnet50"), 10);
  EXPECT_EQ(l.size(), 1u + 3 + 4 + 6 + 3 + 1);
  EXPECT_EQ(l[0].kind, LayerKind::ResNetStem);
  EXPECT_EQ(l[0].parameters.front().name, "conv1.weight");
  EXPECT_EQ(l[1].name, "layer1.0");
  EXPECT_EQ(l[1].kind, LayerKind::Bottleneck);
  EXPECT_EQ(l[1].parameters.back().name, "layer1.0.downsample.1.bias");  // 64 -> 256: a stride-1 shortcut
  EXPECT_EQ(l[1].out_channels, 256);
  EXPECT_EQ(l[2].conv("conv2").spec.stride[1], 1);
  EXPECT_EQ(l[4].name, "layer2.0");
  EXPECT_EQ(l[4].conv("conv2").spec.stride[1], 2);
  EXPECT_EQ(l[4].conv("downsample.0").spec.stride[1], 2);
  EXPECT_EQ(l.layers().back().kind, LayerKind::PoolFcHead);
  EXPECT_EQ(l.layers().back().parameters.front().name, "fc.weight");
  EXPECT_EQ(l.stage_count(), 4);
  // Paths: the stem's conv and max-pool, a basic block's two 3x3 convs, a bottleneck's one.
  EXPECT_EQ(l[0].path.size(), 2u);
  EXPECT_EQ(l[0].path[1].name, "maxpool");
  EXPECT_EQ(l[4].path.size(), 1u);
  EXPECT_EQ(l[4].path[0].name, "layer2.0.conv2");
  EXPECT_EQ(resnet_layers(*find_resnet_variant("resnet18"))[3].path.size(), 2u);
  EXPECT_EQ(l[0].stride_w() * l[4].stride_w(), 8);
}

TEST(ResNetLayers, StridedShortcutsLandOnTheMainPathsStripes) {
  for (const char* name :
       {"resnet18", "resnet50", "resnet_test", "resnet_test_bottleneck", "regnety_008", "regnet_test"}) {
    const LayerList layers = *backbone_layers(name);
    for (int sp : {1, 2, 3, 4}) {
      const int64_t width = 32 * sp * 2;
      const std::vector<LayerShape> shapes = layer_shapes(layers, 64, width, sp);
      for (const LayerShape& s : shapes) {
        const Layer& l = layers[s.layer];
        for (const Conv& c : l.convs) {
          if (c.name != "downsample.0" && c.name != "downsample.conv") continue;
          EXPECT_EQ(shard::output_partition(s.in, c.spec.along_w()), s.out) << name << " " << l.name << " sp " << sp;
        }
      }
      EXPECT_EQ(shapes.back().height, 2) << name;  // 64 / 32
      EXPECT_EQ(shapes.back().out.global_width(), width / 32) << name;
    }
  }
}

TEST(ResNetLayers, EveryBackboneNameHasALayerList) {
  for (const std::string& name : backbone_name_list()) {
    ASSERT_TRUE(backbone_family(name).has_value()) << name;
    EXPECT_GT(backbone_layers(name, 10)->parameter_count(), 0) << name;
  }
  EXPECT_FALSE(backbone_layers("resnet9000").has_value());
  EXPECT_NE(backbone_names().find("resnet101"), std::string::npos);
}

}  // namespace
}  // namespace halo::arch
