// One frame made ready for the network: its views decoded, resized to the network input,
// normalised, padded and cut to the rank's stripe, with projections and labels to match.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <opencv2/core.hpp>

#include "data/FrameBatch.h"
#include "data/FrameReader.h"
#include "data/LoaderOptions.h"

namespace halo::data {

struct FrameSample {
  at::Tensor images;     // (V, 3, Hp, stripe width) float, ImageNet-normalised RGB, zero padding
  at::Tensor lidar2img;  // (V, 4, 4) float: ego -> network-input pixels
  at::Tensor image_hw;   // (V, 2) int64
  bool has_targets = false;
  FrameTargets targets;
  std::string key;
};

// Padded network input size (Hp, Wp) for the options.
std::pair<int64_t, int64_t> padded_size(const LoaderOptions& options);

// The image of camera `index` of a frame (CV_8UC3 BGR, any size): decoded from its file or rendered.
using ViewImage = std::function<cv::Mat(size_t index)>;

// The transform every frame goes through, on disk or generated: the views of options.views
// (their images from `image`) resized, normalised and cut to the stripe; projections and
// labels to match. `source` (the frame's file, or its key) starts every error message.
FrameSample make_frame_sample(const LoaderOptions& options, const Frame& frame, const ViewImage& image,
                              const std::string& source);

// read_frame + make_frame_sample over the frame's image files. Throws util::Error naming the
// file and what is wrong (missing/corrupt JSON or image, a view the frame lacks).
FrameSample load_frame_sample(const LoaderOptions& options, const FrameRef& ref);

// Samples stacked into one micro-batch (options give the padded width and stripe). Throws
// util::Error when annotated and unannotated frames are mixed.
FrameBatch collate(std::vector<FrameSample>& samples, const LoaderOptions& options);

// The affine map from an image of (width, height) pixels to the network input, as
// (sx, ox, sy, oy): x' = sx * x + ox (pixel centres stay aligned, as cv::resize does).
std::array<double, 4> resize_map(int64_t width, int64_t height, const LoaderOptions& options);

}  // namespace halo::data
