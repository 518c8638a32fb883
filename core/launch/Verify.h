// `halo verify`: one forward+backward of a model sharded over real ranks and unsharded on
// identical weights and data; reports the max relative error of every quantity.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace halo::launch {

struct VerifyOptions {
  std::string arch = "convnext_test";
  std::array<int64_t, 4> input{2, 3, 64, 128};  // V, C, H, W (V views = the batch)
  int sp = 2;
  int dp = 1;
  bool checkpoint = false;      // per-block activation checkpointing in the sharded run
  bool recompute_cheap = true;  // the sharded run's ConvNeXt blocks as parallel.recompute cheap runs them
  bool overlap = true;
  std::string dtype = "float64";  // float64 | float32
  uint64_t seed = 0;
  int64_t num_classes = 10;
  double tolerance = 0;  // 0: 1e-10 for float64, 1e-5 for float32
  int timeout_s = 600;

  double effective_tolerance() const;
};

struct VerifyRow {
  std::string quantity;  // "output", "loss", "input_grad", "grad:stem.0.weight", ...
  double rel_error = 0;
};

struct VerifyReport {
  VerifyOptions options;
  std::vector<VerifyRow> rows;
  double worst = 0;
  bool ok = false;
};

// Checks the options (architecture, shapes, shardability) and throws util::Error listing
// the problem and fix before anything runs.
void validate(const VerifyOptions& o);

// Parent: spawns sp*dp ranks of this executable ("halo verify-rank ..."), computes the
// unsharded reference meanwhile, and compares.
VerifyReport run_verify(const VerifyOptions& o);

// Rank entry (reads torchrun's variables); writes its results into out_dir.
void run_verify_rank(const VerifyOptions& o, const std::string& out_dir);

// The command-line arguments that reproduce `o` for a rank.
std::vector<std::string> verify_rank_args(const VerifyOptions& o, const std::string& out_dir);

}  // namespace halo::launch
