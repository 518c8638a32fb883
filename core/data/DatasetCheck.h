// `halo data check`: reads every frame of a split and decodes every image, collecting the
// problems (with file and field) instead of stopping at the first, plus per-segment counts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace halo::data {

struct SegmentReport {
  std::string segment_id;
  int64_t frames = 0, annotated = 0, lanes = 0, elements = 0, images = 0;
  std::vector<std::string> problems;
};

struct DatasetReport {
  std::string split;
  std::vector<SegmentReport> segments;
  int64_t problem_count() const;
};

// `progress` (may be empty) is called after each frame with (frames done, frames total).
DatasetReport check_dataset(const std::filesystem::path& root, const std::string& split,
                            const std::filesystem::path& split_file = {},
                            const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace halo::data
