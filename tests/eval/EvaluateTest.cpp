// evaluate() on in-memory frames: a perfect prediction scores 1, empty frames and missing
// relations score as the devkit scores them, and mismatched frame sets are refused.
#include <gtest/gtest.h>

#include "EvalTestFrames.h"
#include "eval/Evaluate.h"
#include "util/Error.h"

namespace halo::eval {
namespace {

using testing::exact_prediction;
using testing::make_frame;

void expect_scores(const Scores& s, double det_l, double det_t, double top_ll, double top_lt, double ols) {
  EXPECT_EQ(s.det_l, det_l);
  EXPECT_EQ(s.det_t, det_t);
  EXPECT_EQ(s.top_ll, top_ll);
  EXPECT_EQ(s.top_lt, top_lt);
  EXPECT_EQ(s.ols, ols);
}

TEST(EvalEvaluate, PerfectPredictionScoresOne) {
  const std::vector<data::Frame> gt = {make_frame("1", 4, 3), make_frame("2", 0, 0), make_frame("3", 3, 0),
                                       make_frame("4", 0, 2)};
  Predictions pred;
  for (const auto& f : gt) pred[f.key()] = exact_prediction(f);
  const Scores s = evaluate(gt, pred);
  expect_scores(s, 1.0, 1.0, 1.0, 1.0, 1.0);
  EXPECT_EQ(s.frames, 4);
}

TEST(EvalEvaluate, OnlyEmptyFramesScoreDetectionOneAndTopologyZero) {
  // Nothing to find and nothing predicted: AP is 1; no frame has a topology matrix: 0.
  const std::vector<data::Frame> gt = {make_frame("1", 0, 0)};
  expect_scores(evaluate(gt, {{gt[0].key(), exact_prediction(gt[0])}}), 1.0, 1.0, 0.0, 0.0, 0.5);
}

TEST(EvalEvaluate, MissedRelationsCostTheirVertices) {
  const std::vector<data::Frame> gt = {make_frame("1", 2, 0)};  // lane 0 -> lane 1
  FramePrediction p = exact_prediction(gt[0]);
  p.topology_lclc = {{0.0, 0.2}, {0.0, 0.0}};  // relation not predicted
  const Scores s = evaluate(gt, {{gt[0].key(), p}});
  // rows: lane 0 misses its successor (0), lane 1 has none (1); columns: lane 0 (1), lane 1 (0).
  EXPECT_FLOAT_EQ(static_cast<float>(s.top_ll), 0.5f);
  EXPECT_EQ(s.det_l, 1.0);
}

TEST(EvalEvaluate, UnmatchedLanesTurnTheirNonRelationsIntoFalsePositives) {
  const std::vector<data::Frame> gt = {make_frame("1", 3, 0)};
  FramePrediction p = exact_prediction(gt[0]);
  p.lanes.pop_back();  // lane 2 not detected
  p.topology_lcte.pop_back();
  p.topology_lclc = {{0.0, 0.9}, {0.0, 0.0}};
  const Scores s = evaluate(gt, {{gt[0].key(), p}});
  // Lane 2 is unmatched: every pair with it that is not a relation is filled just above 0.5.
  // rows 0: gt{1}, pred{1, 2} -> 1; 1: gt{2}, pred{} -> 0; 2: gt{}, pred{0, 1, 2} -> 0;
  // cols 0: gt{}, pred{2} -> 0; 1: gt{0}, pred{0, 2} -> 1; 2: gt{1}, pred{0, 2} -> 0.
  EXPECT_FLOAT_EQ(static_cast<float>(s.top_ll), 2.0f / 6.0f);
}

TEST(EvalEvaluate, RefusesMismatchedFrameSets) {
  const std::vector<data::Frame> gt = {make_frame("1", 1, 1), make_frame("2", 1, 1)};
  Predictions pred = {{gt[0].key(), exact_prediction(gt[0])}};
  try {
    evaluate(gt, pred);
    FAIL() << "a missing frame was accepted";
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no prediction for frame val/seg/2"), std::string::npos) << e.what();
  }
  pred[gt[1].key()] = exact_prediction(gt[1]);
  pred["val/seg/9"] = exact_prediction(gt[1]);
  try {
    evaluate(gt, pred);
    FAIL() << "an unknown frame was accepted";
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.what()).find("results/val/seg/9 names a frame that is not in the ground truth"),
              std::string::npos)
        << e.what();
  }
  std::vector<data::Frame> test_split = {make_frame("1", 1, 1)};
  test_split[0].annotation.reset();
  EXPECT_THROW(evaluate(test_split, pred), util::Error);
}

TEST(EvalEvaluate, RefusesMalformedPredictions) {
  const std::vector<data::Frame> gt = {make_frame("1", 2, 2)};
  auto expect_error = [&](FramePrediction p, const std::string& needle) {
    try {
      evaluate(gt, {{gt[0].key(), p}});
      FAIL() << "accepted a prediction that should fail with: " << needle;
    } catch (const util::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const FramePrediction ok = exact_prediction(gt[0]);
  FramePrediction p = ok;
  p.topology_lclc.pop_back();
  expect_error(p, "results/val/seg/1/predictions/topology_lclc has 1 rows, expected 2");
  p = ok;
  p.topology_lcte[1].push_back(0.3);
  expect_error(p, "topology_lcte[1] has 3 columns, expected 2");
  p = ok;
  p.lanes[1].confidence = std::nan("");
  expect_error(p, "lane_centerline[1]/confidence is nan");
  p = ok;
  p.elements[0].box[2] = INFINITY;
  expect_error(p, "traffic_element[0]/points is inf");
  p = ok;
  p.elements[1].id = p.lanes[0].id;
  expect_error(p, "id 0 is used twice");
  p = ok;
  p.lanes[0].points.clear();
  expect_error(p, "lane_centerline[0]/points is empty");
}

}  // namespace
}  // namespace halo::eval
