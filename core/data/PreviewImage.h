// A small 8-bit picture of network input: what the workbench's layout view draws the camera
// views from (each rank writes the stripe it trains on).
#pragma once

#include <cstdint>
#include <filesystem>

#include <ATen/core/Tensor.h>

namespace halo::data {

// images: (V, 3, H, W) normalised input (any float dtype, any device). Returns (V, 3, h, w)
// uint8 on the CPU: each view average-pooled by one factor so that h <= max_height, and
// stretched from its own min..max to 0..255 (the normalisation is undone only in looks).
at::Tensor preview_of(const at::Tensor& images, int64_t max_height = 192);

// One view (3, h, w) uint8 RGB as a PNG, written whole or not at all; util::Error naming the file.
void write_preview_png(const at::Tensor& view, const std::filesystem::path& path);

}  // namespace halo::data
