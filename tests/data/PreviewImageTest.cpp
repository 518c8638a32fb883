// data::preview_of pools every view by one factor under the height limit and stretches it to
// 0..255; write_preview_png writes it as a PNG that reads back pixel for pixel (RGB order).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include <torch/torch.h>
#include <opencv2/imgcodecs.hpp>

#include "data/PreviewImage.h"

namespace halo::data {
namespace {

TEST(PreviewImage, EveryViewIsPooledByOneFactorAndStretched) {
  torch::manual_seed(3);
  const at::Tensor images = torch::randn({2, 3, 400, 100});  // normalised input: negative and positive
  const at::Tensor p = preview_of(images, 192);              // factor ceil(400 / 192) = 3
  EXPECT_EQ(p.dtype(), torch::kUInt8);
  EXPECT_EQ(p.sizes(), (std::vector<int64_t>{2, 3, 134, 34}));
  for (int64_t v = 0; v < 2; ++v) {
    EXPECT_EQ(p[v].min().item<int>(), 0);
    EXPECT_EQ(p[v].max().item<int>(), 255);
  }
  // Small enough already: not pooled, only stretched; a constant view does not divide by zero.
  const at::Tensor flat = preview_of(torch::full({1, 3, 8, 4}, 0.5), 192);
  EXPECT_EQ(flat.sizes(), (std::vector<int64_t>{1, 3, 8, 4}));
  EXPECT_EQ(flat.max().item<int>(), 0);
}

TEST(PreviewImage, APngReadsBackPixelForPixel) {
  torch::manual_seed(4);
  const at::Tensor view = preview_of(torch::randn({1, 3, 20, 30}))[0];  // (3, 20, 30)
  const auto path = std::filesystem::temp_directory_path() / ("halo-preview-" + std::to_string(::getpid())) /
                    "preview" / "view-0-rank-1.png";
  write_preview_png(view, path);
  const cv::Mat bgr = cv::imread(path.string(), cv::IMREAD_COLOR);
  ASSERT_EQ(bgr.rows, 20);
  ASSERT_EQ(bgr.cols, 30);
  for (int y = 0; y < 20; y += 7)
    for (int x = 0; x < 30; x += 9)
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(bgr.at<cv::Vec3b>(y, x)[2 - c], view[c][y][x].item<int>()) << y << "," << x << "," << c;
  std::filesystem::remove_all(path.parent_path().parent_path());
}

}  // namespace
}  // namespace halo::data
