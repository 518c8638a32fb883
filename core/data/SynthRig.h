// Camera rigs of the synthetic OpenLane-V2 segments: the 7 Argoverse 2 ring cameras
// (subset A) or the 6 nuScenes cameras (subset B), with realistic intrinsics and mounts.
#pragma once

#include <vector>

#include "data/Frame.h"
#include "data/SynthRandom.h"

namespace halo::data {

// Cameras of one segment (front view first): intrinsics at the standard image size times
// `image_scale`, camera->ego extrinsics with a small per-segment mounting jitter from `rng`.
// image_path is left empty (it depends on the frame).
std::vector<Camera> synth_rig(char subset, double image_scale, SynthRandom& rng);

// Camera->ego rotation of a camera looking along yaw (rad, from ego x towards y) with a
// pitch (rad, positive down) and roll; camera axes x right, y down, z forward.
Mat3 camera_rotation(double yaw, double pitch, double roll);

}  // namespace halo::data
