// Writes frames in the OpenLane-V2 format (info JSON the devkit and read_frame load) and the
// data_dict_subset_X.json split listing; every file is written atomically.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/Frame.h"

namespace halo::data {

// The frame as its info JSON (the inverse of parse_frame). Cameras whose width/height
// differ from the standard OpenLane-V2 size get an extra "image_size": [w, h].
nlohmann::json frame_to_json(const Frame& frame);

// <root>/<split>/<segment>/info/<timestamp>.json
void write_frame(const std::filesystem::path& root, const Frame& frame);

// Writes (or updates: other splits already listed are kept) the split file
// {split: {segment: ["<timestamp>.json", ...]}}.
void write_split_file(const std::filesystem::path& path, const std::string& split,
                      const std::map<std::string, std::vector<std::string>>& timestamps_by_segment);

// Writes bytes to `path` atomically, creating its folder.
void write_file_atomic(const std::filesystem::path& path, const std::string& bytes);

}  // namespace halo::data
