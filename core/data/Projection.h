// Frame geometry shared by the generator, renderer and pipeline: world <-> ego <-> camera
// and the 4x4 ego -> pixel projection (lidar2img) of a camera.
#pragma once

#include <array>

#include "data/Frame.h"

namespace halo::data {

using Mat4 = std::array<std::array<double, 4>, 4>;

inline Vec3 world_to_ego(const Pose& pose, const Vec3& p) {  // R^T (p - t)
  const Vec3 d = {p[0] - pose.translation[0], p[1] - pose.translation[1], p[2] - pose.translation[2]};
  Vec3 out{};
  for (int i = 0; i < 3; ++i)
    out[i] = pose.rotation[0][i] * d[0] + pose.rotation[1][i] * d[1] + pose.rotation[2][i] * d[2];
  return out;
}

inline Vec3 ego_to_camera(const Camera& c, const Vec3& p) {  // rotation/translation are camera -> ego
  const Pose as_pose{c.rotation, c.translation};
  return world_to_ego(as_pose, p);
}

// Ego -> pixel (u, v, depth) through K; depth <= 0 means behind the camera.
inline Vec3 ego_to_pixel(const Camera& c, const Vec3& p) {
  const Vec3 q = ego_to_camera(c, p);
  const double u = c.K[0][0] * q[0] + c.K[0][1] * q[1] + c.K[0][2] * q[2];
  const double v = c.K[1][0] * q[0] + c.K[1][1] * q[1] + c.K[1][2] * q[2];
  const double w = c.K[2][0] * q[0] + c.K[2][1] * q[1] + c.K[2][2] * q[2];
  return {u / w, v / w, w};
}

// lidar2img: [K 0; 0 1] * [R^T  -R^T t; 0 1], i.e. ego (homogeneous) -> (u*d, v*d, d, 1).
inline Mat4 lidar2img(const Camera& c) {
  Mat4 e{};  // ego -> camera
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) e[i][j] = c.rotation[j][i];
    e[i][3] = -(c.rotation[0][i] * c.translation[0] + c.rotation[1][i] * c.translation[1] +
                c.rotation[2][i] * c.translation[2]);
  }
  e[3][3] = 1;
  Mat4 out{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += (i < 3 && k < 3 ? c.K[i][k] : (i == k ? 1.0 : 0.0)) * e[k][j];
      out[i][j] = s;
    }
  return out;
}

}  // namespace halo::data
