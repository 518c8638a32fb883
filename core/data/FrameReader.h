// Reads OpenLane-V2 frames from the dataset's own files (<root>/<split>/<segment>/info/<ts>.json)
// and lists a split's frames, with errors that name the file and the JSON field.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/Frame.h"

namespace halo::data {

struct FrameRef {
  std::string split, segment_id, timestamp;
};

// <root>/<split>/<segment>/info/<timestamp>.json -> Frame (annotation absent when the file
// has none, e.g. the test split). Throws util::Error naming the file and the field.
Frame read_frame(const std::filesystem::path& root, const FrameRef& ref);

// The same from parsed JSON; `source_for_errors` (usually the file path) starts every message.
Frame parse_frame(const nlohmann::json& j, const FrameRef& ref, const std::string& source_for_errors);

// Frames of a split: from a data_dict_subset_A.json-style file {split: {segment: ["<ts>.json", ...]}}
// when given, else by scanning <root>/<split>/*/info/*.json; sorted by segment, then timestamp.
std::vector<FrameRef> list_frames(const std::filesystem::path& root, const std::string& split,
                                  const std::filesystem::path& split_file = {});

// <root>/<split>/<segment>/info/<timestamp>.json
std::filesystem::path frame_json_path(const std::filesystem::path& root, const FrameRef& ref);

// Known image size (width, height) of an OpenLane-V2 camera (subset A: Argoverse 2 ring
// cameras, subset B: nuScenes), or (0, 0) for an unknown name.
std::pair<int64_t, int64_t> standard_image_size(const std::string& camera);

// Canonical view order of the subset a camera belongs to, front view first
// (empty for an unknown name).
const std::vector<std::string>& standard_camera_order(const std::string& camera);

}  // namespace halo::data
