// parallel.pointwise as a Trainer applies it: what the worker log says each rank runs the
// ConvNeXt blocks' per-pixel products on, for every setting and the cases that keep GEMM.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "model/PointwiseKernel.h"
#include "parallel/Mesh.h"
#include "train/Trainer.h"

namespace halo::train {
namespace {

std::string summary(config::Pointwise p, const std::string& arch = "convnext_test",
                    config::Recompute r = config::Recompute::Cheap,
                    config::Precision precision = config::Precision::Fp32) {
  config::ExperimentConfig c;
  c.model.arch = arch;
  c.model.num_classes = 5;
  c.data.height = 32;
  c.data.width = 64;
  c.data.batch = 2;
  c.data.workers = 0;
  c.parallel.strategy = config::Strategy::None;
  c.parallel.sp = 1;
  c.parallel.pointwise = p;
  c.parallel.recompute = r;
  c.train.precision = precision;
  return Trainer(c, parallel::Mesh::solo()).pointwise_summary();
}

TEST(PointwiseChoice, EachSettingIsReportedAsTheKernelTheBlocksRun) {
  EXPECT_EQ(config::ExperimentConfig{}.parallel.pointwise, config::Pointwise::Cpu) << "the default";
  const model::CpuKind cpu = model::this_cpu_kind();
  const std::string by_cpu = summary(config::Pointwise::Cpu);
  EXPECT_EQ(by_cpu, fmt::format("{} (cpu: {}, {})",
                                model::kernel_for_cpu(cpu) == model::PointwiseKernel::OneDnn ? "onednn" : "gemm",
                                cpu.amd ? "AMD" : "not AMD", cpu.avx512f ? "AVX-512" : "no AVX-512"));
  EXPECT_EQ(summary(config::Pointwise::Cpu), by_cpu) << "the same kernel on every run of a host";
  EXPECT_EQ(summary(config::Pointwise::Gemm), "gemm (parallel.pointwise)");
  EXPECT_EQ(summary(config::Pointwise::OneDnn), "onednn (parallel.pointwise)");
  const std::string automatic = summary(config::Pointwise::Auto);
  EXPECT_TRUE(automatic.starts_with("gemm (auto, probe: gemm ") || automatic.starts_with("onednn (auto, probe: gemm "))
      << automatic;
}

TEST(PointwiseChoice, WhatCannotTakeOneDnnSaysItStaysOnGemm) {
  EXPECT_EQ(summary(config::Pointwise::OneDnn, "convnext_test", config::Recompute::None),
            "gemm (parallel.recompute none runs the plain ops, whose products are GEMMs)");
  EXPECT_EQ(summary(config::Pointwise::Auto, "convnext_test", config::Recompute::Cheap, config::Precision::Bf16),
            "gemm (oneDNN's kernel is used for fp32 CPU products only)");
  EXPECT_EQ(summary(config::Pointwise::OneDnn, "resnet_test"), "") << "no ConvNeXt blocks: nothing to say";
}

}  // namespace
}  // namespace halo::train
