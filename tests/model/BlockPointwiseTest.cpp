// parallel.recompute = cheap: a ConvNeXt with block_pointwise gives the plain blocks' logits
// and every gradient (float64 to 1e-12, bf16 autocast to its rounding), drop path and
// checkpointing included, and keeps about half the bytes per block after forward.
#include <gtest/gtest.h>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "model/BlockPointwise.h"
#include "model/ConvNeXt.h"
#include "parallel/Communicator.h"
#include "support/IntraOpThreads.h"

namespace halo::model {
namespace {

struct Result {
  at::Tensor logits, input_grad;
  std::vector<at::Tensor> grads;
};

// batch 16: ATen runs a fp32 1x1 convolution on one thread in oneDNN from 16 samples up.
Result run(bool cheap, at::ScalarType dtype, bool bf16_autocast, double drop_path, CheckpointLevel level,
           PointwiseKernel kernel = PointwiseKernel::Gemm, int64_t batch = 2) {
  const auto v = *arch::find_convnext_variant("convnext_test");
  torch::manual_seed(5);
  ConvNeXt net(v, 4, 3, drop_path);
  net->to(dtype);
  {  // the MLP's biases start at zero: random ones, so a bias added twice or not at all shows
    const torch::NoGradGuard no_grad;
    for (auto& p : net->named_parameters())
      if (p.key().find("mlp.fc") != std::string::npos && p.key().ends_with(".bias")) p.value().normal_(0.0, 0.5);
  }
  net->set_checkpoint(level);
  EXPECT_TRUE(net->set_recompute_cheap(cheap));
  EXPECT_TRUE(net->set_pointwise_kernel(kernel));
  torch::manual_seed(1);
  const at::Tensor images = torch::randn({batch, 3, 32, 64}, dtype).requires_grad_(true);
  torch::manual_seed(9);  // drop path's draws
  at::autocast::set_autocast_enabled(at::kCPU, bf16_autocast);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  const parallel::ShardedTensor x{images, shard::even_partition(64, 1), parallel::Communicator::solo()};
  Result r;
  r.logits = net->forward(x).to(dtype);
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  torch::cross_entropy_loss(r.logits, torch::arange(batch) % 4).backward();
  r.input_grad = images.grad();
  for (const auto& p : net->parameters()) r.grads.push_back(p.grad());
  return r;
}

double relative(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max().clamp_min(1e-300)).item<double>();
}

struct Case {
  const char* name;
  at::ScalarType dtype;
  bool bf16;
  double drop_path;
  CheckpointLevel level;
  double tolerance;
  PointwiseKernel kernel = PointwiseKernel::Gemm;  // the cheap block's products
  int64_t batch = 2;
  int threads = 0;  // intra-op threads (0: the process's)
};

class BlockPointwise : public ::testing::TestWithParam<Case> {};

TEST_P(BlockPointwise, GivesThePlainBlocksValuesAndGradients) {
  const Case c = GetParam();
  const testing::IntraOpThreads threads(c.threads > 0 ? c.threads : at::get_num_threads());
  const Result plain = run(false, c.dtype, c.bf16, c.drop_path, c.level, PointwiseKernel::Gemm, c.batch);
  const Result cheap = run(true, c.dtype, c.bf16, c.drop_path, c.level, c.kernel, c.batch);
  EXPECT_LE(relative(cheap.logits, plain.logits), c.tolerance);
  EXPECT_LE(relative(cheap.input_grad, plain.input_grad), c.tolerance);
  ASSERT_EQ(cheap.grads.size(), plain.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i)
    EXPECT_LE(relative(cheap.grads[i], plain.grads[i]), c.tolerance) << "parameter " << i;
}

// A checkpoint's recompute of a block computes only what backward keeps (LayerNorm and fc1,
// not GELU, fc2 or the output's values): the saved tensors are the same, so every gradient is
// the same to the bit as without checkpointing, drop path's replayed draws included.
TEST(BlockPointwiseRecompute, CheckpointedGradientsEqualTheUncheckpointedOnesBitForBit) {
  for (const bool bf16 : {false, true}) {
    const Result whole = run(true, at::kFloat, bf16, 0.2, CheckpointLevel::None);
    const Result ckpt = run(true, at::kFloat, bf16, 0.2, CheckpointLevel::Block);
    EXPECT_TRUE(torch::equal(ckpt.logits, whole.logits)) << "bf16 " << bf16;
    EXPECT_TRUE(torch::equal(ckpt.input_grad, whole.input_grad)) << "bf16 " << bf16;
    ASSERT_EQ(ckpt.grads.size(), whole.grads.size());
    for (size_t i = 0; i < whole.grads.size(); ++i)
      EXPECT_TRUE(torch::equal(ckpt.grads[i], whole.grads[i])) << "parameter " << i << ", bf16 " << bf16;
  }
}

// Backward overwrites the saved fc1 output with GELU's output (model::gelu_backward_keep_value_):
// a second backward through the same graph is refused by autograd, not run on the wrong values.
TEST(BlockPointwiseBackward, ASecondBackwardIsRefusedNotWrong) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    torch::manual_seed(2);
    const int64_t c = 8;
    const auto o = torch::TensorOptions().dtype(dtype);
    BlockPointwiseWeights w{torch::randn({c}, o),     torch::randn({c}, o),        torch::randn({4 * c, c}, o),
                            torch::randn({4 * c}, o), torch::randn({c, 4 * c}, o), torch::randn({c}, o),
                            torch::randn({c}, o)};
    const at::Tensor y = torch::randn({2, 3, 5, c}, o).requires_grad_(true);
    const at::Tensor loss = block_pointwise(y, w).square().sum();
    loss.backward({}, /*retain_graph=*/true);
    EXPECT_THROW(loss.backward(), c10::Error) << dtype;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BlockPointwise,
    ::testing::Values(
        Case{"float64", at::kDouble, false, 0.0, CheckpointLevel::None, 1e-12},
        Case{"float64_drop_path_checkpoint", at::kDouble, false, 0.2, CheckpointLevel::Block, 1e-12},
        Case{"float32", at::kFloat, false, 0.0, CheckpointLevel::None, 1e-5},
        // LayerNorm's backward split over two threads by Halo (model::layer_norm_backward_rows):
        // 64 samples give the first stage 8192 rows of 8 channels, enough for two parts
        Case{"float32_two_threads", at::kFloat, false, 0.2, CheckpointLevel::None, 1e-5, PointwiseKernel::Gemm, 64, 2},
        Case{"float32_one_thread", at::kFloat, false, 0.2, CheckpointLevel::None, 1e-5, PointwiseKernel::Gemm, 64, 1},
        // bf16 has 8 bits of mantissa: gamma's gradient is summed in another order
        Case{"bf16_autocast", at::kFloat, true, 0.0, CheckpointLevel::None, 4e-2},
        // oneDNN's 1x1 convolutions for fc1 and fc2 and their gradients
        Case{"float32_onednn", at::kFloat, false, 0.2, CheckpointLevel::Block, 1e-5, PointwiseKernel::OneDnn, 16},
        // float64 and bf16 products are GEMMs whatever the setting
        Case{"float64_onednn", at::kDouble, false, 0.0, CheckpointLevel::None, 1e-12, PointwiseKernel::OneDnn, 16},
        Case{"bf16_autocast_onednn", at::kFloat, true, 0.0, CheckpointLevel::None, 4e-2, PointwiseKernel::OneDnn, 16}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace halo::model
