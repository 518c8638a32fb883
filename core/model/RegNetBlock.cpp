// relu(conv3(se(conv2(conv1 x))) + shortcut), conv3 without its ReLU; timm's initialisation:
// kaiming normal (fan_out) convs, SE fc weights normal(0, sqrt(2 / fan_out)), conv3's BN zero.
#include "model/RegNetBlock.h"

#include <torch/torch.h>

#include "model/BatchNorm.h"
#include "model/ResNetBlock.h"
#include "parallel/Collectives.h"

namespace halo::model {

using parallel::ShardedTensor;

ConvBnImpl::ConvBnImpl(const arch::Conv& c, const arch::Norm& n, bool relu, bool zero_bn) : relu_(relu) {
  conv = register_module("conv", resnet_conv(c));
  bn = register_module("bn", resnet_bn(n, zero_bn));
}

ShardedTensor ConvBnImpl::forward(const ShardedTensor& x) {
  ShardedTensor y = batch_norm(*bn, conv->forward(x));
  return relu_ ? y.with(at::relu(y.local)) : y;
}

SqueezeExciteImpl::SqueezeExciteImpl(const arch::Conv& a, const arch::Conv& b) {
  fc1 = register_module("fc1", torch::nn::Conv2d(torch::nn::Conv2dOptions(a.in_channels, a.out_channels, 1)));
  fc2 = register_module("fc2", torch::nn::Conv2d(torch::nn::Conv2dOptions(b.in_channels, b.out_channels, 1)));
}

ShardedTensor SqueezeExciteImpl::forward(const ShardedTensor& x) {
  const double n = static_cast<double>(x.local.size(2) * x.global_width());
  // Every rank scales its stripe by the same gate: the pooled sum's backward sums over the group.
  at::Tensor pooled = parallel::sum_partials(x.local.sum({2, 3}, true), x.group) / n;  // (B, C, 1, 1)
  at::Tensor gate = at::sigmoid(fc2->forward(at::relu(fc1->forward(pooled))));
  return x.with(x.local * gate);
}

RegNetBlockImpl::RegNetBlockImpl(const arch::Layer& l) {
  conv1 = register_module("conv1", ConvBn(l.conv("conv1.conv"), l.norm("conv1.bn"), true));
  conv2 = register_module("conv2", ConvBn(l.conv("conv2.conv"), l.norm("conv2.bn"), true));
  se = register_module("se", SqueezeExcite(l.conv("se.fc1"), l.conv("se.fc2")));
  conv3 = register_module("conv3", ConvBn(l.conv("conv3.conv"), l.norm("conv3.bn"), false, true));
  for (const arch::Conv& c : l.convs)
    if (c.name == "downsample.conv")
      downsample = register_module("downsample", ConvBn(c, l.norm("downsample.bn"), false));
}

ShardedTensor RegNetBlockImpl::forward(const ShardedTensor& x) {
  ShardedTensor y = conv3->forward(se->forward(conv2->forward(conv1->forward(x))));
  const at::Tensor shortcut = downsample ? downsample->forward(x).local : x.local;
  return y.with(at::relu(y.local + shortcut));  // (B, C', H', W'/world)
}

}  // namespace halo::model
