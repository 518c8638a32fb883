// Pooling keeps the stripe's columns in proportion (the same factor on every rank), so the
// workbench can lay the ranks' stripes side by side into the whole view.
#include "data/PreviewImage.h"

#include <vector>

#include <torch/torch.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <fmt/format.h>

#include "io/AtomicFile.h"
#include "util/Error.h"

namespace halo::data {

at::Tensor preview_of(const at::Tensor& images, int64_t max_height) {
  torch::NoGradGuard no_grad;
  at::Tensor x = images.detach().to(torch::kCPU, torch::kFloat);  // (V, 3, H, W)
  const int64_t factor = (x.size(2) + max_height - 1) / max_height;
  if (factor > 1) x = torch::avg_pool2d(x, {factor, factor}, {factor, factor}, {0, 0}, /*ceil_mode=*/true);
  const at::Tensor lo = x.amin({1, 2, 3}, true), hi = x.amax({1, 2, 3}, true);
  x = (x - lo) / (hi - lo).clamp_min(1e-12) * 255.0;
  return x.round().clamp(0, 255).to(torch::kUInt8).contiguous();
}

void write_preview_png(const at::Tensor& view, const std::filesystem::path& path) {
  const at::Tensor hwc = view.permute({1, 2, 0}).contiguous();  // (h, w, 3) RGB
  const cv::Mat rgb(static_cast<int>(hwc.size(0)), static_cast<int>(hwc.size(1)), CV_8UC3, hwc.data_ptr<uint8_t>());
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  std::vector<uchar> png;
  if (!cv::imencode(".png", bgr, png))
    throw util::Error(fmt::format("cannot encode the preview {} as PNG", path.string()));
  std::filesystem::create_directories(path.parent_path());
  io::AtomicFile file(path.string());
  file.write(png.data(), png.size());
  file.commit();
}

}  // namespace halo::data
