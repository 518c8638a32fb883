// Ordering (seeded Fisher-Yates per epoch, then the data-parallel shard), the worker pool
// (claims positions at most prefetch_batches ahead of the consumer) and collation.
#include "data/MultiViewLoader.h"

#include <numeric>

#include <fmt/format.h>
#include <torch/torch.h>

#include "data/SynthRandom.h"
#include "util/Error.h"

namespace halo::data {

namespace {

void check_options(const LoaderOptions& o) {
  const auto bad = [](const std::string& what, const std::string& hint) { throw util::Error(what, hint); };
  if (o.height <= 0 || o.width <= 0)
    bad(fmt::format("network input size {}x{} (height x width) is not positive", o.height, o.width),
        "set data.height and data.width in the experiment");
  if (o.batch <= 0) bad(fmt::format("batch size {} is not positive", o.batch), "set data.batch >= 1");
  if (o.workers <= 0) bad(fmt::format("{} worker threads", o.workers), "use at least 1 worker");
  if (o.pad_stride <= 0) bad(fmt::format("pad stride {} is not positive", o.pad_stride), "use e.g. 32");
  if (o.shard_count <= 0 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    bad(fmt::format("shard {} of {} does not exist", o.shard_index, o.shard_count),
        "use 0 <= shard_index < shard_count");
  const int64_t wp = padded_size(o).second;
  const int64_t end = o.stripe_end < 0 ? wp : o.stripe_end;
  if (o.stripe_begin < 0 || end <= o.stripe_begin || end > wp)
    bad(fmt::format("stripe [{}, {}) is not inside the padded width {}", o.stripe_begin, end, wp),
        "a rank's stripe must be a non-empty column range of the padded image");
}

}  // namespace

MultiViewLoader::MultiViewLoader(LoaderOptions options) : options_(std::move(options)) {
  check_options(options_);
  refs_ = list_frames(options_.root, options_.split, options_.split_file);
  if (refs_.empty())
    throw util::Error(fmt::format("{}: split '{}' has no frames", options_.root.string(), options_.split),
                      "check the dataset root, split and split file (`halo data check`)");
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { work(); });
}

MultiViewLoader::~MultiViewLoader() { stop_workers(); }

void MultiViewLoader::stop_workers() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
}

int64_t MultiViewLoader::batches_per_epoch() const {
  const int64_t n = frames() / options_.shard_count;
  return options_.drop_last ? n / options_.batch : (n + options_.batch - 1) / options_.batch;
}

int64_t MultiViewLoader::skipped() const {
  std::lock_guard lock(mu_);
  return skipped_;
}

void MultiViewLoader::start_epoch(int64_t epoch) {
  std::vector<size_t> perm(refs_.size());
  std::iota(perm.begin(), perm.end(), size_t{0});
  if (options_.shuffle) {
    SynthRandom rng(options_.seed, 0x5EED0000ULL + static_cast<uint64_t>(epoch), 17);
    for (size_t i = perm.size(); i > 1; --i)
      std::swap(perm[i - 1], perm[static_cast<size_t>(rng.integer(0, static_cast<int64_t>(i) - 1))]);
  }
  // Every shard gets the same number of frames (the remainder is dropped this epoch).
  const size_t per_shard = perm.size() / static_cast<size_t>(options_.shard_count);
  std::vector<FrameRef> order;
  for (size_t i = 0; i < per_shard; ++i)
    order.push_back(
        refs_[perm[i * static_cast<size_t>(options_.shard_count) + static_cast<size_t>(options_.shard_index)]]);
  {
    std::lock_guard lock(mu_);
    order_ = std::move(order);
    ready_.clear();
    claimed_ = consumed_ = 0;
    ++generation_;
  }
  cv_.notify_all();
}

void MultiViewLoader::work() {
  std::unique_lock lock(mu_);
  for (;;) {
    const size_t ahead = static_cast<size_t>(options_.batch * std::max(1, options_.prefetch_batches + 1));
    cv_.wait(lock, [&] { return stop_ || (claimed_ < order_.size() && claimed_ < consumed_ + ahead); });
    if (stop_) return;
    const size_t pos = claimed_++;
    const uint64_t gen = generation_;
    const FrameRef ref = order_[pos];
    lock.unlock();
    Result r;
    try {
      r.sample = load_frame_sample(options_, ref);
    } catch (const util::Error& e) {
      r.error = e.problem(), r.hint = e.hint();
    } catch (const std::exception& e) {  // OpenCV or LibTorch failure on this frame
      r.error = fmt::format("{}: {}", frame_json_path(options_.root, ref).string(), e.what());
    }
    lock.lock();
    if (gen == generation_) ready_[pos] = std::move(r);
    cv_.notify_all();
  }
}

std::optional<FrameBatch> MultiViewLoader::next() {
  std::vector<FrameSample> samples;
  std::unique_lock lock(mu_);
  while (static_cast<int64_t>(samples.size()) < options_.batch && consumed_ < order_.size()) {
    cv_.wait(lock, [&] { return ready_.count(consumed_) > 0; });
    Result r = std::move(ready_.at(consumed_));
    ready_.erase(consumed_++);
    cv_.notify_all();
    if (r.sample) {
      samples.push_back(std::move(*r.sample));
    } else if (options_.skip_bad) {
      ++skipped_;
    } else {
      throw util::Error(r.error,
                        r.hint.empty() ? "fix or remove the frame, or set skip_bad to skip bad frames" : r.hint);
    }
  }
  lock.unlock();
  if (samples.empty() || (options_.drop_last && static_cast<int64_t>(samples.size()) < options_.batch))
    return std::nullopt;
  return collate(samples, options_);
}

}  // namespace halo::data
