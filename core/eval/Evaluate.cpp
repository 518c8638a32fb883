// evaluate.py's evaluate() for the OpenLane-V2 score: distances per frame, greedy matches per
// threshold, APs over all frames, then topology APs on the matches; float32 where numpy uses it.
#include "eval/Evaluate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "eval/AveragePrecision.h"
#include "eval/Distance.h"
#include "eval/NumpyArithmetic.h"
#include "eval/TopologyAp.h"
#include "util/Error.h"

namespace halo::eval {
namespace {

constexpr double kFrechetThresholds[] = {1.0, 2.0, 3.0};
constexpr double kIouThreshold = 0.75;
constexpr int kAttributes = 13;

struct FrameData {
  const data::Annotation* gt;
  const FramePrediction* pred;
  Matrix lane_dist, element_dist;
};

// AP at one threshold over all frames for the objects `keep` selects; per-frame matches out.
template <class Keep>
float detection_ap(const std::vector<FrameData>& frames, bool lanes, double threshold, Keep keep,
                   std::vector<FrameMatches>* matches_out) {
  std::vector<FrameMatches> matches;
  int64_t num_gts = 0;
  for (const auto& f : frames) {
    std::vector<int64_t> gi, pi;
    std::vector<double> conf;
    const size_t ng = lanes ? f.gt->lanes.size() : f.gt->elements.size();
    const size_t np = lanes ? f.pred->lanes.size() : f.pred->elements.size();
    for (size_t i = 0; i < ng; ++i)
      if (lanes || keep(f.gt->elements[i].attribute)) gi.push_back(static_cast<int64_t>(i));
    for (size_t j = 0; j < np; ++j)
      if (lanes || keep(f.pred->elements[j].attribute)) {
        pi.push_back(static_cast<int64_t>(j));
        conf.push_back(lanes ? f.pred->lanes[j].confidence : f.pred->elements[j].confidence);
      }
    const Matrix& full = lanes ? f.lane_dist : f.element_dist;
    Matrix sub(static_cast<int64_t>(gi.size()), static_cast<int64_t>(pi.size()));
    for (size_t a = 0; a < gi.size(); ++a)
      for (size_t b = 0; b < pi.size(); ++b) sub(static_cast<int64_t>(a), static_cast<int64_t>(b)) = full(gi[a], pi[b]);
    matches.push_back(match_predictions(sub, conf, threshold));
    num_gts += static_cast<int64_t>(gi.size());
  }
  const float ap = average_precision(matches, num_gts);
  if (matches_out) *matches_out = std::move(matches);
  return ap;
}

// The pairwise distances of every frame, frames spread over the hardware threads (each frame's
// matrices are computed by one thread, so the values do not depend on the thread count).
void compute_distances(std::vector<FrameData>& frames, const Progress& progress) {
  const auto total = static_cast<int64_t>(frames.size());
  std::atomic<int64_t> next{0};
  int64_t done = 0;
  std::mutex mutex;
  auto work = [&] {
    for (int64_t k; (k = next++) < total;) {
      FrameData& f = frames[static_cast<size_t>(k)];
      f.lane_dist = lane_distances(f.gt->lanes, f.pred->lanes);
      f.element_dist = element_distances(f.gt->elements, f.pred->elements);
      std::lock_guard<std::mutex> lock(mutex);
      ++done;
      if (progress) progress(done, total);
    }
  };
  const int64_t n = std::min<int64_t>(total, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

void check_finite(double v, const std::string& where) {
  if (!std::isfinite(v))
    throw util::Error(fmt::format("prediction {} is {}, expected a finite number", where, v),
                      "write only finite numbers in the prediction file");
}

}  // namespace

void check_prediction(const std::string& key, const FramePrediction& p) {
  const std::string at = "results/" + key + "/predictions";
  std::set<int64_t> ids;
  auto unique_id = [&](int64_t id, const std::string& where) {
    if (!ids.insert(id).second)
      throw util::Error(fmt::format("prediction {}: id {} is used twice", where, id),
                        "ids must be unique over lane_centerline and traffic_element of a frame");
  };
  for (size_t i = 0; i < p.lanes.size(); ++i) {
    const std::string where = fmt::format("{}/lane_centerline[{}]", at, i);
    if (p.lanes[i].points.empty())
      throw util::Error(fmt::format("prediction {}/points is empty", where),
                        "give each lane at least one (x, y, z) point");
    for (const auto& pt : p.lanes[i].points)
      for (double v : pt) check_finite(v, where + "/points");
    check_finite(p.lanes[i].confidence, where + "/confidence");
    unique_id(p.lanes[i].id, where);
  }
  for (size_t i = 0; i < p.elements.size(); ++i) {
    const std::string where = fmt::format("{}/traffic_element[{}]", at, i);
    for (double v : p.elements[i].box) check_finite(v, where + "/points");
    check_finite(p.elements[i].confidence, where + "/confidence");
    unique_id(p.elements[i].id, where);
  }
  auto check_matrix = [&](const std::vector<std::vector<double>>& m, size_t cols, const std::string& name) {
    const std::string hint = "topology_lclc is #lanes x #lanes, topology_lcte is #lanes x #traffic elements";
    if (m.size() != p.lanes.size())
      throw util::Error(
          fmt::format("prediction {}/{} has {} rows, expected {} (one per lane)", at, name, m.size(), p.lanes.size()),
          hint);
    for (size_t r = 0; r < m.size(); ++r) {
      if (m[r].size() != cols)
        throw util::Error(
            fmt::format("prediction {}/{}[{}] has {} columns, expected {}", at, name, r, m[r].size(), cols), hint);
      for (double v : m[r]) check_finite(v, fmt::format("{}/{}[{}]", at, name, r));
    }
  };
  check_matrix(p.topology_lclc, p.lanes.size(), "topology_lclc");
  check_matrix(p.topology_lcte, p.elements.size(), "topology_lcte");
}

Scores evaluate(const std::vector<data::Frame>& gt, const Predictions& pred, const Progress& progress) {
  if (gt.empty()) throw util::Error("no ground-truth frames to evaluate", "check the dataset root and split");
  std::vector<FrameData> frames;
  std::set<std::string> keys;
  for (const auto& f : gt) {
    const std::string key = f.key();
    if (!f.annotation)
      throw util::Error(fmt::format("ground-truth frame {} has no annotation", key),
                        "evaluate on a split with annotation (train or val), not test");
    if (!keys.insert(key).second) throw util::Error(fmt::format("ground-truth frame {} appears twice", key));
    auto it = pred.find(key);
    if (it == pred.end())
      throw util::Error(fmt::format("no prediction for frame {} (results/{} is missing)", key, key),
                        "predict every frame of the split, with empty lists where nothing is found");
    check_prediction(key, it->second);
    frames.push_back({&*f.annotation, &it->second, {}, {}});
  }
  for (const auto& [key, _] : pred)
    if (!keys.count(key))
      throw util::Error(fmt::format("prediction results/{} names a frame that is not in the ground truth", key),
                        "evaluate against the split the predictions were made for");

  compute_distances(frames, progress);

  Scores s;
  s.frames = static_cast<int64_t>(frames.size());
  auto all = [](int64_t) { return true; };
  std::vector<std::vector<FrameMatches>> lane_matches(3);
  std::vector<float> det_l;
  for (int t = 0; t < 3; ++t) det_l.push_back(detection_ap(frames, true, kFrechetThresholds[t], all, &lane_matches[t]));
  std::vector<float> det_t;
  for (int a = 0; a < kAttributes; ++a) {
    det_t.push_back(detection_ap(
        frames, false, kIouThreshold, [a](int64_t x) { return x == a; }, nullptr));
    s.det_t_per_attribute[static_cast<size_t>(a)] = det_t.back();
  }
  std::vector<FrameMatches> element_matches;
  detection_ap(frames, false, kIouThreshold, all, &element_matches);

  std::vector<float> ll, lt;
  for (int t = 0; t < 3; ++t)
    for (size_t k = 0; k < frames.size(); ++k) {
      const auto& g = *frames[k].gt;
      const auto& p = *frames[k].pred;
      const auto nl = static_cast<int64_t>(g.lanes.size()), ne = static_cast<int64_t>(g.elements.size());
      if (nl == 0) continue;  // the devkit skips a frame whose gt matrix has a zero dimension
      const auto lanes = invert_matches(lane_matches[t][k].gt_index, nl);
      append_vertex_aps(g.topology_lclc, nl, nl, p.topology_lclc, lanes, lanes, ll);
      if (ne == 0) continue;
      const auto elements = invert_matches(element_matches[k].gt_index, ne);
      append_vertex_aps(g.topology_lcte, nl, ne, p.topology_lcte, lanes, elements, lt);
    }
  const float det_l_mean = numpy_mean(det_l), det_t_mean = numpy_mean(det_t);
  const float top_ll = mean_vertex_ap(ll), top_lt = mean_vertex_ap(lt);
  s.det_l = det_l_mean;
  s.det_t = det_t_mean;
  s.top_ll = top_ll;
  s.top_lt = top_lt;
  s.ols = numpy_mean(std::vector<float>{det_l_mean, det_t_mean, std::sqrt(top_ll), std::sqrt(top_lt)});
  return s;
}

}  // namespace halo::eval
