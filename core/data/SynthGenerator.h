// `halo data synth`: writes synthetic OpenLane-V2 segments (info JSON, rendered JPEG images,
// data_dict_subset_X.json) that read_frame and the devkit load like real ones.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace halo::data {

struct SynthOptions {
  std::filesystem::path out;
  char subset = 'A';  // 'A': 7 Argoverse 2 cameras, 'B': 6 nuScenes cameras
  int segments = 1, frames = 1;
  uint64_t seed = 0;
  std::string split = "train";  // "test" frames are written without annotation
  double image_scale = 1.0;     // scales image sizes and K (small images for tests)
};

struct SynthSummary {
  int64_t segments = 0, frames = 0, images = 0, lanes = 0, elements = 0;
  std::filesystem::path split_file;
};

// Throws util::Error naming the bad option.
void validate(const SynthOptions& options);

// Writes the dataset; the output is a deterministic function of the options. `progress`
// (may be empty) is called after each frame with (frames done, frames total).
SynthSummary generate_synthetic(const SynthOptions& options,
                                const std::function<void(int64_t, int64_t)>& progress = {});

// "data_dict_subset_A.json" / "..._B.json"
std::string split_file_name(char subset);

}  // namespace halo::data
