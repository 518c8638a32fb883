// The step profile's JSON (what `halo bench step --profile` reads back from a rank) keeps each
// op's device, and a CPU step's profile holds CPU ops only.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "train/StepProfiler.h"

namespace halo::train {
namespace {

TEST(StepProfile, JsonKeepsGpuKernelsApartFromCpuOps) {
  StepProfile p;
  p.step_ms = 285.0;
  p.ops_self_ms = 219.0;
  p.gpu_ms = 148.8;
  p.ops = {{"aten::mm", 3.4, 4.8, 146, false}, {"conv2d_c1_k1_nhwc", 14.8, 14.8, 36, true}};
  const StepProfile back = nlohmann::json(p).get<StepProfile>();
  EXPECT_DOUBLE_EQ(back.gpu_ms, 148.8);
  ASSERT_EQ(back.ops.size(), 2u);
  EXPECT_FALSE(back.ops[0].gpu);
  EXPECT_TRUE(back.ops[1].gpu);
  EXPECT_EQ(back.ops[1].name, "conv2d_c1_k1_nhwc");
  EXPECT_EQ(back.ops[1].calls, 36);
}

TEST(StepProfile, JsonWithoutDevicesReadsAsCpuOps) {  // written before GPU kernels were listed
  const auto j = nlohmann::json::parse(
      R"({"step_ms": 10, "ops_self_ms": 8, "ops": [{"name": "aten::mm", "self_ms": 5, "total_ms": 6, "calls": 2}]})");
  const StepProfile p = j.get<StepProfile>();
  EXPECT_EQ(p.gpu_ms, 0.0);
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_FALSE(p.ops[0].gpu);
}

TEST(StepProfiler, ACpuStepHasItsOpsAndNoKernels) {
  const torch::Tensor a = torch::randn({256, 256}), b = torch::randn({256, 256});
  StepProfiler profiler;
  profiler.start();
  const torch::Tensor c = torch::mm(a, b).relu();
  const StepProfile p = profiler.stop(1.0);
  EXPECT_EQ(c.size(0), 256);
  EXPECT_EQ(p.gpu_ms, 0.0);
  bool mm = false;
  for (const OpTime& o : p.ops) {
    EXPECT_FALSE(o.gpu) << o.name;
    mm = mm || (o.name == "aten::mm" && o.calls == 1 && o.self_ms > 0);
  }
  EXPECT_TRUE(mm);
  EXPECT_GT(p.ops_self_ms, 0.0);
}

}  // namespace
}  // namespace halo::train
