// Resume checkpoint names: step-<zero-padded step>.pt, read back by number, not as text
// (step-1000002.pt is after step-999999.pt).
#include "train/CheckpointName.h"

#include <fmt/format.h>

namespace halo::train {

std::string checkpoint_file_name(int64_t step) { return fmt::format("step-{:06d}.pt", step); }

std::optional<int64_t> checkpoint_step(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  if (!name.starts_with("step-") || !name.ends_with(".pt") || name.size() <= 8 || name.size() > 8 + 18)
    return std::nullopt;
  int64_t step = 0;
  for (size_t i = 5; i + 3 < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

}  // namespace halo::train
