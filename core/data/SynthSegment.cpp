// The synthetic road: constant-curvature reference line with parallel lanes cut into pieces
// at boundaries; some boundaries are intersections with turn connectors, lights and signs.
#include "data/SynthSegment.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "data/Polyline.h"
#include "data/Projection.h"
#include "data/SynthRig.h"

namespace halo::data {

namespace {

constexpr int kPoints = 201;
constexpr double kBehind = 45.0, kAhead = 48.0;  // lane window along the road (m)

int split_base(const std::string& split) {
  if (split == "train") return 0;
  if (split == "val") return 10000;
  if (split == "test") return 20000;
  return 30000;
}

bool in_range(const Vec3& p) { return std::abs(p[0]) <= 50.0 && std::abs(p[1]) <= 25.0; }

// The longest run of `pts` inside the BEV range, resampled to kPoints evenly by arc length
// (first and last points kept exactly, so connected lanes still share end points).
std::vector<Vec3> clip_and_resample(const std::vector<Vec3>& pts) {
  size_t best0 = 0, best_n = 0;
  for (size_t i = 0; i < pts.size();) {
    size_t j = i;
    while (j < pts.size() && in_range(pts[j])) ++j;
    if (j - i > best_n) best0 = i, best_n = j - i;
    i = j + 1;
  }
  const std::vector<Vec3> run(pts.begin() + static_cast<std::ptrdiff_t>(best0),
                              pts.begin() + static_cast<std::ptrdiff_t>(best0 + best_n));
  if (best_n < 2 || polyline_length(run) < 2.0) return {};
  return resample_polyline(run, kPoints);
}

}  // namespace

SynthSegment::SynthSegment(char subset, uint64_t seed, int index, const std::string& split, double image_scale)
    : subset_(subset), split_(split), seed_(seed), index_(index), image_scale_(image_scale) {
  segment_id_ = fmt::format("{:05d}", split_base(split) + index);
  SynthRandom rng(seed, static_cast<uint64_t>(split_base(split) + index) + 1, 1);
  rig_ = synth_rig(subset, image_scale, rng);
  curvature_ = rng.uniform(-1.0 / 250, 1.0 / 250);
  heading0_ = rng.uniform(-M_PI, M_PI);
  grade_ = rng.uniform(-0.015, 0.015);
  speed_ = rng.uniform(6.0, 12.0);
  piece_length_ = rng.uniform(28.0, 40.0);
  lane_width_ = rng.uniform(3.3, 3.8);
  lanes_ = static_cast<int>(rng.integer(2, 4));
  ego_lane_ = static_cast<int>(rng.integer(0, lanes_ - 1));
  s0_ = rng.uniform(0.0, piece_length_);
  origin_ = {rng.uniform(-2000, 2000), rng.uniform(-2000, 2000), rng.uniform(-5, 5)};
}

double SynthSegment::heading(double s) const { return heading0_ + curvature_ * s; }

double SynthSegment::lane_offset(int lane) const { return ((lanes_ - 1) / 2.0 - lane) * lane_width_; }

Vec3 SynthSegment::road_point(double s, double d) const {
  const double h = heading(s);
  double x, y;
  if (std::abs(curvature_) < 1e-9) {
    x = s * std::cos(heading0_), y = s * std::sin(heading0_);
  } else {
    x = (std::sin(h) - std::sin(heading0_)) / curvature_;
    y = -(std::cos(h) - std::cos(heading0_)) / curvature_;
  }
  return {origin_[0] + x - d * std::sin(h), origin_[1] + y + d * std::cos(h), origin_[2] + grade_ * s};
}

Vec3 SynthSegment::connector_point(int lane, int boundary, bool left, double phi) const {
  const double s = boundary * piece_length_;
  const Vec3 start = road_point(s, lane_offset(lane));
  const double h = heading(s), r = left ? 12.0 : 7.0, side = left ? 1.0 : -1.0;
  const double along = r * std::sin(phi), across = side * r * (1.0 - std::cos(phi));
  return {start[0] + along * std::cos(h) - across * std::sin(h), start[1] + along * std::sin(h) + across * std::cos(h),
          start[2]};
}

bool SynthSegment::is_intersection(int b) const {
  return SynthRandom(seed_, 7919u * (split_base(split_) + index_ + 1), static_cast<uint64_t>(b + (1 << 20)))
      .chance(0.6);
}

std::vector<SynthSegment::Sign> SynthSegment::signs_at(int b) const {
  std::vector<Sign> out;
  if (!is_intersection(b)) return out;
  SynthRandom rng(seed_, 104729u * (split_base(split_) + index_ + 1), static_cast<uint64_t>(b + (1 << 20)));
  const double s = b * piece_length_;
  const int64_t base = (b + 100000) * 100LL;
  // Traffic lights over the lanes (one per one or two lanes), category 1, attribute 0..3.
  for (int k = 0, j = 0; k < lanes_; ++j) {
    const int span = std::min<int>(lanes_ - k, static_cast<int>(rng.integer(1, 2)));
    Sign t{base + 60 + j,
           1,
           rng.chance(0.1) ? 0 : rng.integer(1, 3),
           s + rng.uniform(3, 6),
           (lane_offset(k) + lane_offset(k + span - 1)) / 2,
           rng.uniform(5.0, 6.0),
           0.5,
           1.3,
           {},
           b};
    for (int i = 0; i < span; ++i) t.lanes.push_back(k + i);
    out.push_back(t);
    k += span;
  }
  // A road sign at the right road side, category 2, attribute 4..12.
  if (rng.chance(0.8)) {
    Sign t{base + 80,
           2,
           rng.integer(4, 12),
           s - rng.uniform(6, 12),
           lane_offset(lanes_ - 1) - lane_width_ / 2 - 1.5,
           rng.uniform(2.2, 3.0),
           1.0,
           1.0,
           {},
           b};
    const int64_t a = t.attribute;
    if (a == 5 || a == 7 || a == 9 || a == 10 || a == 11)
      t.lanes = {0};
    else if (a == 6 || a == 8 || a == 12)
      t.lanes = {lanes_ - 1};
    else
      for (int k = 0; k < lanes_; ++k) t.lanes.push_back(k);
    out.push_back(t);
  }
  return out;
}

double SynthSegment::ego_s(int f) const { return s0_ + speed_ * 0.5 * f; }

Pose SynthSegment::pose_at(int f) const {
  const double s = ego_s(f), h = heading(s);
  Pose p;
  p.rotation = {{{std::cos(h), -std::sin(h), 0.0}, {std::sin(h), std::cos(h), 0.0}, {0.0, 0.0, 1.0}}};
  p.translation = road_point(s, lane_offset(ego_lane_));
  return p;
}

std::string SynthSegment::timestamp_at(int f) const {
  const int64_t seg = split_base(split_) + index_;
  if (subset_ == 'A') return std::to_string(315966000000000000LL + seg * 100000000000LL + f * 500000000LL);
  return std::to_string(1533150000000000LL + seg * 100000000LL + f * 500000LL);
}

void SynthSegment::add_lanes(const Pose& pose, double se, Annotation& a) const {
  const auto add = [&](int64_t id, bool connector, const std::vector<Vec3>& world) {
    std::vector<Vec3> ego(world.size());
    for (size_t i = 0; i < world.size(); ++i) ego[i] = world_to_ego(pose, world[i]);
    auto pts = clip_and_resample(ego);
    if (!pts.empty()) a.lanes.push_back({id, std::move(pts), connector});
  };
  const int b0 = static_cast<int>(std::floor((se - kBehind) / piece_length_));
  const int b1 = static_cast<int>(std::floor((se + kAhead) / piece_length_));
  for (int m = b0; m <= b1; ++m) {
    const double s0 = std::max(m * piece_length_, se - kBehind), s1 = std::min((m + 1) * piece_length_, se + kAhead);
    if (s1 - s0 < 1.0) continue;
    for (int k = 0; k < lanes_; ++k) {
      std::vector<Vec3> world(2 * kPoints);
      for (size_t i = 0; i < world.size(); ++i)
        world[i] = road_point(s0 + (s1 - s0) * i / (world.size() - 1.0), lane_offset(k));
      if (s0 == m * piece_length_) world.front() = road_point(m * piece_length_, lane_offset(k));
      if (s1 == (m + 1) * piece_length_) world.back() = road_point((m + 1) * piece_length_, lane_offset(k));
      add((m + 100000) * 100LL + k, false, world);
    }
  }
  for (int b = b0; b <= b1 + 1; ++b) {
    const double s = b * piece_length_;
    if (s < se - kBehind || s > se + kAhead || !is_intersection(b)) continue;
    for (bool left : {true, false}) {
      const int lane = left ? 0 : lanes_ - 1;
      std::vector<Vec3> world(kPoints);
      for (int i = 0; i < kPoints; ++i) world[i] = connector_point(lane, b, left, M_PI / 2 * i / (kPoints - 1));
      world.front() = road_point(s, lane_offset(lane));
      add((b + 100000) * 100LL + (left ? 50 : 51), true, world);
    }
  }
  const size_t n = a.lanes.size();
  a.topology_lclc.assign(n, std::vector<int>(n, 0));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (i != j && a.lanes[i].points.back() == a.lanes[j].points.front()) a.topology_lclc[i][j] = 1;
}

void SynthSegment::add_elements(const Frame& frame, double se, Annotation& a) const {
  const Camera& cam = frame.cameras.front();
  const int b0 = static_cast<int>(std::floor(se / piece_length_)),
            b1 = static_cast<int>(std::ceil((se + 90) / piece_length_));
  for (int b = b0; b <= b1; ++b) {
    for (const Sign& t : signs_at(b)) {
      if (t.s < se + 5 || t.s > se + 80) continue;
      const double h = heading(t.s);
      const Vec3 c = road_point(t.s, t.d);
      double x1 = 1e18, y1 = 1e18, x2 = -1e18, y2 = -1e18;
      bool visible = true;
      for (double dx : {-0.5, 0.5})
        for (double dz : {-0.5, 0.5}) {
          const double lat = dx * t.w;
          const Vec3 corner = {c[0] - lat * std::sin(h), c[1] + lat * std::cos(h), c[2] + t.z + dz * t.h};
          const Vec3 px = ego_to_pixel(cam, world_to_ego(frame.pose, corner));
          if (px[2] < 2.0) visible = false;
          x1 = std::min(x1, px[0]), x2 = std::max(x2, px[0]), y1 = std::min(y1, px[1]), y2 = std::max(y2, px[1]);
        }
      if (!visible || x1 < 0 || y1 < 0 || x2 > cam.width - 1 || y2 > cam.height - 1 || x2 - x1 < 1.0 || y2 - y1 < 1.0)
        continue;
      a.elements.push_back({t.id, t.category, t.attribute, {x1, y1, x2, y2}});
      std::vector<int> col(a.lanes.size(), 0);
      for (size_t i = 0; i < a.lanes.size(); ++i)
        for (int k : t.lanes)
          if (a.lanes[i].id == (b - 1 + 100000) * 100LL + k) col[i] = 1;
      for (size_t i = 0; i < a.lanes.size(); ++i) a.topology_lcte[i].push_back(col[i]);
    }
  }
}

Frame SynthSegment::frame(int f) const {
  Frame fr;
  fr.version = "v2.1.0";
  fr.split = split_;
  fr.segment_id = segment_id_;
  fr.timestamp = timestamp_at(f);
  fr.meta_json =
      nlohmann::json{{"source", "halo_synth"}, {"source_id", fmt::format("seed{}-{}", seed_, segment_id_)}}.dump();
  fr.cameras = rig_;
  for (auto& c : fr.cameras)
    c.image_path = fmt::format("{}/{}/image/{}/{}.jpg", split_, segment_id_, c.name, fr.timestamp);
  fr.pose = pose_at(f);
  Annotation a;
  add_lanes(fr.pose, ego_s(f), a);
  a.topology_lcte.assign(a.lanes.size(), {});
  add_elements(fr, ego_s(f), a);
  fr.annotation = std::move(a);
  return fr;
}

}  // namespace halo::data
