// The file names of a run's resume checkpoints, <run>/checkpoints/step-<digits>.pt: the one
// place that writes the pattern (the worker) and reads it back (resume, export's refusals).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace halo::train {

std::string checkpoint_file_name(int64_t step);  // "step-000060.pt"

// The step of a file named step-<digits>.pt (any number of digits), else nullopt.
std::optional<int64_t> checkpoint_step(const std::filesystem::path& p);

}  // namespace halo::train
