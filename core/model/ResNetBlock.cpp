// Basic: relu(bn2(conv2(relu(bn1(conv1 x)))) + shortcut); bottleneck adds conv3/bn3 after a
// ReLU. The strided 3x3 conv and the strided 1x1 shortcut land on the same stripes.
#include "model/ResNetBlock.h"

#include <torch/torch.h>

#include "model/BatchNorm.h"

namespace halo::model {

using parallel::ShardedTensor;

ShardedConv2d resnet_conv(const arch::Conv& c) {
  ShardedConv2d m(c.in_channels, c.out_channels, c.spec, c.bias);
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_normal_(m->weight, 0.0, torch::kFanOut, torch::kReLU);
  return m;
}

torch::nn::BatchNorm2d resnet_bn(const arch::Norm& n, bool zero) {
  torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(n.channels).eps(n.eps));
  if (zero) {
    torch::NoGradGuard no_grad;
    bn->weight.zero_();
  }
  return bn;
}

ResNetBlockImpl::ResNetBlockImpl(const arch::Layer& l) {
  const bool bottleneck = l.kind == arch::LayerKind::Bottleneck;
  conv1 = register_module("conv1", resnet_conv(l.conv("conv1")));
  bn1 = register_module("bn1", resnet_bn(l.norm("bn1")));
  conv2 = register_module("conv2", resnet_conv(l.conv("conv2")));
  bn2 = register_module("bn2", resnet_bn(l.norm("bn2"), !bottleneck));
  if (bottleneck) {
    conv3 = register_module("conv3", resnet_conv(l.conv("conv3")));
    bn3 = register_module("bn3", resnet_bn(l.norm("bn3"), true));
  }
  for (const arch::Conv& c : l.convs)
    if (c.name == "downsample.0") {
      downsample = register_module("downsample", torch::nn::ModuleList());
      downsample->push_back(resnet_conv(c));
      downsample->push_back(resnet_bn(l.norm("downsample.1")));
    }
}

ShardedTensor ResNetBlockImpl::forward(const ShardedTensor& x) {
  auto relu = [](const ShardedTensor& t) { return t.with(at::relu(t.local)); };
  ShardedTensor y = relu(batch_norm(*bn1, conv1->forward(x)));
  y = batch_norm(*bn2, conv2->forward(y));
  if (conv3) y = batch_norm(*bn3, conv3->forward(relu(y)));
  at::Tensor shortcut = x.local;
  if (downsample)
    shortcut =
        batch_norm(downsample->at<torch::nn::BatchNorm2dImpl>(1), downsample->at<ShardedConv2dImpl>(0).forward(x))
            .local;
  return y.with(at::relu(y.local + shortcut));  // (B, C', H', W'/world)
}

}  // namespace halo::model
