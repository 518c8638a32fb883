// cv::imdecode over the file's bytes (so a missing file and a corrupt one are told apart).
#include "data/ImageFile.h"

#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>
#include <opencv2/imgcodecs.hpp>

#include "util/Error.h"

namespace halo::data {

cv::Mat load_image(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw util::Error(fmt::format("{}: image is missing or unreadable", path.string()),
                      "check the dataset root; the frame's JSON names this image");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  cv::Mat img;
  if (!bytes.empty()) img = cv::imdecode(bytes, cv::IMREAD_COLOR);
  if (img.empty())
    throw util::Error(fmt::format("{}: is not a decodable image ({} bytes)", path.string(), bytes.size()),
                      "the file is corrupt or truncated; restore or regenerate it");
  return img;
}

}  // namespace halo::data
