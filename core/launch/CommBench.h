// `halo bench comm`: a ConvNeXt-T-sized stage, sharded over real ranks: halo bytes and
// exchange time per layer, and step time of sp=2 (one thread each) against one process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halo::launch {

struct CommBenchOptions {
  int64_t batch = 2, dim = 96, height = 64, width = 256;  // stage-0 map of (2,3,256,1024) images
  int depth = 3;                                          // blocks (convnext_tiny stage 0)
  int iters = 5, warmup = 2;
  int sp = 2;
  int timeout_s = 900;
};

struct CommLayerRow {
  std::string layer;
  int64_t halo_left = 0, halo_right = 0;  // columns
  int64_t bytes_per_step = 0;             // forward gather + backward return, one rank
  double exchange_ms = 0;                 // gather+scatter round trip, mean over iters
};

struct CommConfigRow {
  std::string config;  // "sp=1 (1 thread)", "sp=2 overlap", "sp=2 no overlap"
  int sp = 1;
  bool overlap = true;
  double step_ms = 0;  // forward + backward + gradient sync, mean
  double speedup = 1;  // against sp=1
};

struct CommBenchReport {
  CommBenchOptions options;
  std::vector<CommLayerRow> layers;
  std::vector<CommConfigRow> configs;
};

CommBenchReport run_comm_bench(const CommBenchOptions& o);
// One rank of one configuration; rank 0 writes JSON to out_file.
void run_comm_bench_rank(const CommBenchOptions& o, bool overlap, const std::string& out_file);
std::vector<std::string> comm_bench_rank_args(const CommBenchOptions& o, bool overlap, const std::string& out_file);

}  // namespace halo::launch
