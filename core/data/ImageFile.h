// Decoding a dataset image with OpenCV, failing with the file's path and what is wrong
// (missing, unreadable, not a decodable image).
#pragma once

#include <filesystem>

#include <opencv2/core.hpp>

namespace halo::data {

// The image as CV_8UC3 BGR. Throws util::Error naming the file.
cv::Mat load_image(const std::filesystem::path& path);

}  // namespace halo::data
