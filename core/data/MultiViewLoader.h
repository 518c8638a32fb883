// The OpenLane-V2 multi-view pipeline: frames of a split in a (seed, epoch)-determined order,
// prepared on worker threads into FrameBatch micro-batches, a bounded queue ahead.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "data/FrameBatch.h"
#include "data/FrameReader.h"
#include "data/FrameSample.h"
#include "data/LoaderOptions.h"

namespace halo::data {

class MultiViewLoader {
 public:
  // Lists the split's frames and checks the options (throws util::Error naming the bad one).
  // Nothing is decoded before start_epoch().
  explicit MultiViewLoader(LoaderOptions options);
  ~MultiViewLoader();
  MultiViewLoader(const MultiViewLoader&) = delete;
  MultiViewLoader& operator=(const MultiViewLoader&) = delete;

  // Begins an epoch: the order is a permutation of the frames drawn from (seed, epoch) (the
  // same on every rank), then this shard's share; workers start preparing frames.
  void start_epoch(int64_t epoch);
  // The next micro-batch, or nullopt at the end of the epoch. A bad frame throws util::Error
  // naming its file, or with skip_bad is skipped and counted.
  std::optional<FrameBatch> next();

  int64_t frames() const { return static_cast<int64_t>(refs_.size()); }
  int64_t batches_per_epoch() const;
  int64_t skipped() const;                                             // bad frames skipped so far
  const std::vector<FrameRef>& epoch_order() const { return order_; }  // this shard's frames
  const LoaderOptions& options() const { return options_; }
  std::pair<int64_t, int64_t> padded_size() const { return data::padded_size(options_); }

 private:
  struct Result {
    std::optional<FrameSample> sample;
    std::string error, hint;
  };
  void work();
  void stop_workers();

  LoaderOptions options_;
  std::vector<FrameRef> refs_;
  std::vector<FrameRef> order_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> workers_;
  std::map<size_t, Result> ready_;
  size_t claimed_ = 0, consumed_ = 0;
  uint64_t generation_ = 0;
  int64_t skipped_ = 0;
  bool stop_ = false;
};

}  // namespace halo::data
