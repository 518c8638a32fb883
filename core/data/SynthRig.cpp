// Mounting poses and intrinsics of the synthetic rigs, after the published Argoverse 2 and
// nuScenes sensor layouts (approximate values, same image sizes and view order).
#include "data/SynthRig.h"

#include <cmath>

#include "data/FrameReader.h"

namespace halo::data {

namespace {

struct Mount {
  const char* name;
  double yaw_deg, x, y, z, focal;
};

// Argoverse 2 ring cameras: the front centre one is portrait (1550 x 2048).
const Mount kRingA[] = {
    {"ring_front_center", 0, 1.63, 0.00, 1.44, 1773},    {"ring_front_left", 45, 1.55, 0.48, 1.44, 1686},
    {"ring_front_right", -45, 1.55, -0.48, 1.44, 1686},  {"ring_rear_left", 153, -0.10, 0.62, 1.44, 1686},
    {"ring_rear_right", -153, -0.10, -0.62, 1.44, 1686}, {"ring_side_left", 99, 1.27, 0.91, 1.44, 1686},
    {"ring_side_right", -99, 1.27, -0.91, 1.44, 1686}};
// nuScenes: six 1600 x 900 cameras, the rear one with a wider lens.
const Mount kRingB[] = {
    {"CAM_FRONT", 0, 1.70, 0.02, 1.51, 1266},          {"CAM_FRONT_LEFT", 55, 1.52, 0.49, 1.51, 1257},
    {"CAM_FRONT_RIGHT", -55, 1.50, -0.49, 1.52, 1260}, {"CAM_BACK", 180, 0.03, 0.00, 1.58, 809},
    {"CAM_BACK_LEFT", 110, 1.04, 0.48, 1.56, 1257},    {"CAM_BACK_RIGHT", -110, 1.03, -0.48, 1.57, 1260}};

constexpr double kDeg = M_PI / 180.0;

}  // namespace

Mat3 camera_rotation(double yaw, double pitch, double roll) {
  // Camera axes in the ego frame for a level camera: z forward, x right, y down.
  const double cy = std::cos(yaw), sy = std::sin(yaw), cp = std::cos(pitch), sp = std::sin(pitch);
  const Vec3 fwd = {cy * cp, sy * cp, -sp};
  const Vec3 right0 = {sy, -cy, 0.0};
  // down = fwd x right (right-handed camera: x right, y down, z forward => y = z cross x)
  const Vec3 down0 = {fwd[1] * right0[2] - fwd[2] * right0[1], fwd[2] * right0[0] - fwd[0] * right0[2],
                      fwd[0] * right0[1] - fwd[1] * right0[0]};
  const double cr = std::cos(roll), sr = std::sin(roll);
  Vec3 right, down;
  for (int i = 0; i < 3; ++i) {
    right[i] = cr * right0[i] + sr * down0[i];
    down[i] = -sr * right0[i] + cr * down0[i];
  }
  Mat3 r;
  for (int i = 0; i < 3; ++i) r[i] = {right[i], down[i], fwd[i]};  // columns: camera x, y, z in ego
  return r;
}

std::vector<Camera> synth_rig(char subset, double image_scale, SynthRandom& rng) {
  std::vector<Camera> cams;
  const Mount* begin = subset == 'A' ? std::begin(kRingA) : std::begin(kRingB);
  const Mount* end = subset == 'A' ? std::end(kRingA) : std::end(kRingB);
  for (const Mount* m = begin; m != end; ++m) {
    Camera c;
    c.name = m->name;
    const auto [w, h] = standard_image_size(c.name);
    c.width = std::max<int64_t>(8, std::lround(w * image_scale));
    c.height = std::max<int64_t>(8, std::lround(h * image_scale));
    const double sx = static_cast<double>(c.width) / w, sy = static_cast<double>(c.height) / h;
    const double f = m->focal * rng.uniform(0.99, 1.01);
    c.K = {{{f * sx, 0.0, (w / 2.0 + rng.uniform(-4, 4)) * sx},
            {0.0, f * sy, (h / 2.0 + rng.uniform(-4, 4)) * sy},
            {0.0, 0.0, 1.0}}};
    c.distortion = {0.0, 0.0, 0.0};
    c.rotation = camera_rotation((m->yaw_deg + rng.uniform(-0.5, 0.5)) * kDeg, rng.uniform(-0.5, 1.5) * kDeg,
                                 rng.uniform(-0.3, 0.3) * kDeg);
    c.translation = {m->x + rng.uniform(-0.02, 0.02), m->y + rng.uniform(-0.02, 0.02), m->z + rng.uniform(-0.02, 0.02)};
    cams.push_back(std::move(c));
  }
  return cams;
}

}  // namespace halo::data
