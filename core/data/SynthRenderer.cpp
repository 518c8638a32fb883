// Synthetic OpenLane-V2 images: per-pixel sky/ground (ground textured in world coordinates,
// so it moves with the ego), road quads and lanes through K/extrinsics, attribute-coded TEs.
#include "data/SynthRenderer.h"

#include <cmath>

#include <opencv2/imgproc.hpp>

#include "data/FrameReader.h"
#include "data/Projection.h"

namespace halo::data {

namespace {

constexpr int kShift = 4;  // sub-pixel bits for OpenCV drawing
constexpr double kOne = 1 << kShift;
constexpr double kLaneHalfWidth = 2.0;  // a little over half a lane: no gaps between lanes

const cv::Scalar kPalette[13] = {{128, 128, 128}, {40, 40, 230},  {60, 200, 60}, {30, 210, 230}, {200, 120, 20},
                                 {220, 60, 160},  {160, 60, 220}, {90, 90, 200}, {200, 200, 90}, {30, 130, 240},
                                 {130, 30, 120},  {240, 200, 60}, {60, 240, 180}};

bool usable(const Vec3& px) { return px[2] > 0.1 && std::abs(px[0]) < 1e5 && std::abs(px[1]) < 1e5; }

cv::Point sub(const Vec3& px) {
  return {static_cast<int>(std::lround(px[0] * kOne)), static_cast<int>(std::lround(px[1] * kOne))};
}

uint32_t cell_hash(int64_t x, int64_t y) {
  uint64_t h = static_cast<uint64_t>(x) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(y) * 0xC2B2AE3D27D4EB4FULL;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  return static_cast<uint32_t>(h >> 40);
}

void draw_background(cv::Mat& img, const Frame& frame, const Camera& cam) {
  const double fx = cam.K[0][0], fy = cam.K[1][1], cx = cam.K[0][2], cy = cam.K[1][2];
  const auto& R = cam.rotation;
  const auto& P = frame.pose;
  for (int v = 0; v < img.rows; ++v) {
    auto* row = img.ptr<cv::Vec3b>(v);
    for (int u = 0; u < img.cols; ++u) {
      const double rx = (u - cx) / fx, ry = (v - cy) / fy;  // ray in camera coordinates (z = 1)
      const double dx = R[0][0] * rx + R[0][1] * ry + R[0][2], dy = R[1][0] * rx + R[1][1] * ry + R[1][2];
      const double dz = R[2][0] * rx + R[2][1] * ry + R[2][2];
      if (dz >= -1e-3) {  // sky: brighter towards the horizon
        const double t = std::min(1.0, dz * 3.0);
        row[u] = cv::Vec3b(static_cast<uint8_t>(235 - 60 * t), static_cast<uint8_t>(215 - 70 * t),
                           static_cast<uint8_t>(190 - 90 * t));
        continue;
      }
      const double t = -cam.translation[2] / dz;  // hit of the ground plane z = 0
      const double ex = cam.translation[0] + t * dx, ey = cam.translation[1] + t * dy;
      const double wx = P.rotation[0][0] * ex + P.rotation[0][1] * ey + P.translation[0];
      const double wy = P.rotation[1][0] * ex + P.rotation[1][1] * ey + P.translation[1];
      const int n = static_cast<int>(
          cell_hash(static_cast<int64_t>(std::floor(wx / 3)), static_cast<int64_t>(std::floor(wy / 3))) % 24);
      const double fade = std::min(1.0, t / 150.0);
      const auto mix = [&](double g, double h) { return static_cast<uint8_t>(g * (1 - fade) + h * fade); };
      row[u] = cv::Vec3b(mix(70 + n, 170), mix(115 + n, 180), mix(95 + n, 175));
    }
  }
}

void draw_road(cv::Mat& img, const Camera& cam, const Annotation& a) {
  for (const auto& lane : a.lanes) {
    const auto& p = lane.points;
    for (size_t i = 0; i + 1 < p.size(); i += 4) {
      const size_t j = std::min(i + 4, p.size() - 1);
      const double tx = p[j][0] - p[i][0], ty = p[j][1] - p[i][1], len = std::hypot(tx, ty);
      if (len < 1e-6) continue;
      const double nx = -ty / len * kLaneHalfWidth, ny = tx / len * kLaneHalfWidth;
      const Vec3 c[4] = {ego_to_pixel(cam, {p[i][0] + nx, p[i][1] + ny, p[i][2]}),
                         ego_to_pixel(cam, {p[j][0] + nx, p[j][1] + ny, p[j][2]}),
                         ego_to_pixel(cam, {p[j][0] - nx, p[j][1] - ny, p[j][2]}),
                         ego_to_pixel(cam, {p[i][0] - nx, p[i][1] - ny, p[i][2]})};
      if (!usable(c[0]) || !usable(c[1]) || !usable(c[2]) || !usable(c[3])) continue;
      const cv::Point q[4] = {sub(c[0]), sub(c[1]), sub(c[2]), sub(c[3])};
      cv::fillConvexPoly(img, q, 4, cv::Scalar(72, 70, 68), cv::LINE_8, kShift);
    }
  }
}

void draw_lanes(cv::Mat& img, const Camera& cam, const Annotation& a, int thickness) {
  for (const auto& lane : a.lanes) {
    const cv::Scalar colour = lane_colour(lane.is_intersection_or_connector);
    Vec3 prev = ego_to_pixel(cam, lane.points.front());
    for (size_t i = 1; i < lane.points.size(); ++i) {
      const Vec3 cur = ego_to_pixel(cam, lane.points[i]);
      if (usable(prev) && usable(cur) && prev[2] > 0.5 && cur[2] > 0.5)
        cv::line(img, sub(prev), sub(cur), colour, thickness, cv::LINE_8, kShift);
      prev = cur;
    }
  }
}

void draw_glyph(cv::Mat& img, const cv::Rect2d& r, int64_t attribute, int thickness) {
  const cv::Point2d c(r.x + r.width / 2, r.y + r.height / 2);
  const double s = std::min(r.width, r.height) * 0.35;
  const auto P = [&](double dx, double dy) {
    return cv::Point(static_cast<int>(std::lround((c.x + dx * s) * kOne)),
                     static_cast<int>(std::lround((c.y + dy * s) * kOne)));
  };
  const cv::Scalar white(250, 250, 250);
  const auto arrow = [&](double dx, double dy) {
    cv::arrowedLine(img, P(-dx, -dy), P(dx, dy), white, thickness, cv::LINE_8, kShift, 0.4);
  };
  switch (attribute) {
    case 4:
      arrow(0, -1);
      break;
    case 5:
    case 7:
      arrow(-1, 0);
      break;
    case 6:
    case 8:
      arrow(1, 0);
      break;
    case 9:
    case 10:
      cv::ellipse(img, P(0, 0), cv::Size(static_cast<int>(s * kOne * 0.6), static_cast<int>(s * kOne * 0.8)), 0, 180,
                  360, white, thickness, cv::LINE_8, kShift);
      break;
    case 11:
      arrow(-0.7, -0.7);
      break;
    case 12:
      arrow(0.7, -0.7);
      break;
    default:
      break;
  }
  if (attribute == 7 || attribute == 8 || attribute == 10)
    cv::line(img, P(-1, -1), P(1, 1), cv::Scalar(20, 20, 200), thickness, cv::LINE_8, kShift);
}

void draw_elements(cv::Mat& img, const Annotation& a, int thickness) {
  for (const auto& t : a.elements) {
    const cv::Rect2d r(t.box[0], t.box[1], t.box[2] - t.box[0], t.box[3] - t.box[1]);
    const cv::Point tl(static_cast<int>(std::lround(r.x * kOne)), static_cast<int>(std::lround(r.y * kOne)));
    const cv::Point br(static_cast<int>(std::lround((r.x + r.width) * kOne)),
                       static_cast<int>(std::lround((r.y + r.height) * kOne)));
    if (t.category == 1) {  // traffic light: dark housing, the lit lamp at its attribute's place
      cv::rectangle(img, tl, br, cv::Scalar(25, 25, 25), cv::FILLED, cv::LINE_8, kShift);
      const double slot = t.attribute == 1 ? 0.2 : t.attribute == 3 ? 0.5 : t.attribute == 2 ? 0.8 : 0.5;
      const cv::Point c(static_cast<int>(std::lround((r.x + r.width / 2) * kOne)),
                        static_cast<int>(std::lround((r.y + r.height * slot) * kOne)));
      cv::circle(img, c, static_cast<int>(std::max(1.0, r.width * 0.4) * kOne), attribute_colour(t.attribute),
                 cv::FILLED, cv::LINE_8, kShift);
    } else {  // road sign: attribute-coloured face with a white border and an arrow glyph
      cv::rectangle(img, tl, br, attribute_colour(t.attribute), cv::FILLED, cv::LINE_8, kShift);
      cv::rectangle(img, tl, br, cv::Scalar(250, 250, 250), std::max(1, thickness / 2), cv::LINE_8, kShift);
      draw_glyph(img, r, t.attribute, std::max(1, thickness / 2));
    }
  }
}

}  // namespace

cv::Scalar lane_colour(bool connector) { return connector ? cv::Scalar(0, 200, 255) : cv::Scalar(235, 235, 235); }

cv::Scalar attribute_colour(int64_t attribute) { return kPalette[std::clamp<int64_t>(attribute, 0, 12)]; }

cv::Mat render_view(const Frame& frame, const Annotation& a, size_t camera) {
  const Camera& cam = frame.cameras.at(camera);
  cv::Mat img(static_cast<int>(cam.height), static_cast<int>(cam.width), CV_8UC3);
  draw_background(img, frame, cam);
  draw_road(img, cam, a);
  const auto [w0, h0] = standard_image_size(cam.name);
  const double scale = w0 > 0 ? static_cast<double>(cam.width) / w0 : 1.0;
  const int thickness = std::max(1, static_cast<int>(std::lround(10 * scale)));
  draw_lanes(img, cam, a, thickness);
  if (camera == 0) draw_elements(img, a, thickness);
  return img;
}

}  // namespace halo::data
