// Settings of the OpenLane-V2 multi-view pipeline: where the frames are, the network input
// size and view order, batching, threads, the width stripe a rank keeps, bad-file policy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace halo::data {

struct LoaderOptions {
  std::filesystem::path root;
  std::string split = "train";
  std::filesystem::path split_file;  // empty: scan <root>/<split>
  std::vector<std::string> views;    // camera order; empty: the frame's (front view first)
  int64_t height = 0, width = 0;     // network input size of every view (experiment data.height/width)
  int64_t pad_stride = 32;           // H and W padded up to a multiple of this
  int64_t stripe_begin = 0;          // this rank's columns [stripe_begin, stripe_end) of the padded width
  int64_t stripe_end = -1;           // -1: the whole padded width
  int64_t batch = 1;
  int workers = 2;           // decoding threads
  int prefetch_batches = 2;  // how far the workers run ahead of the consumer
  uint64_t seed = 0;         // the frame order is a function of (seed, epoch) only
  bool shuffle = true;
  bool drop_last = true;                     // drop an epoch's last incomplete batch
  int64_t shard_index = 0, shard_count = 1;  // data-parallel replica: every shard_count-th frame
  bool skip_bad = false;                     // skip (and count) a frame with a corrupt/missing JSON or image
};

}  // namespace halo::data
