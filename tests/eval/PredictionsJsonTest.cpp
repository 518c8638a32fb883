// The prediction file: a round trip through JSON keeps every value, and malformed files are
// refused with the key path of the offending field.
#include <gtest/gtest.h>

#include "EvalTestFrames.h"
#include "eval/PredictionsJson.h"
#include "util/Error.h"

namespace halo::eval {
namespace {

using nlohmann::json;

json valid_document() {
  const data::Frame f = testing::make_frame("7", 2, 2);
  return predictions_to_json({{f.key(), testing::exact_prediction(f)}});
}

void expect_rejected(const json& doc, const std::string& needle) {
  try {
    parse_predictions(doc, "pred.json");
    FAIL() << "accepted a document that should fail with: " << needle;
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("pred.json: ", 0), 0u) << e.what();
  }
}

TEST(EvalPredictionsJson, RoundTrip) {
  const data::Frame f = testing::make_frame("7", 3, 2);
  const Predictions p = {{f.key(), testing::exact_prediction(f)}, {"val/seg/8", FramePrediction{}}};
  const Predictions back = parse_predictions(json::parse(predictions_to_json(p).dump()), "mem");
  ASSERT_EQ(back.size(), 2u);
  const auto& a = p.at(f.key());
  const auto& b = back.at(f.key());
  ASSERT_EQ(b.lanes.size(), 3u);
  EXPECT_EQ(b.lanes[2].points, a.lanes[2].points);
  EXPECT_EQ(b.lanes[2].confidence, a.lanes[2].confidence);
  EXPECT_EQ(b.elements[1].box, a.elements[1].box);
  EXPECT_EQ(b.elements[1].attribute, a.elements[1].attribute);
  EXPECT_EQ(b.topology_lclc, a.topology_lclc);
  EXPECT_EQ(b.topology_lcte, a.topology_lcte);
  EXPECT_TRUE(back.at("val/seg/8").lanes.empty());
}

TEST(EvalPredictionsJson, RejectsMalformedDocuments) {
  const std::string at = "results/val/seg/7/predictions";
  expect_rejected(json{{"method", "x"}}, "<document>/results is missing");
  json d = valid_document();
  d["results"]["val/seg/7"]["predictions"].erase("traffic_element");
  expect_rejected(d, at + "/traffic_element is missing");
  d = valid_document();
  d["results"]["val/seg/7"]["predictions"]["lane_centerline"][1]["points"][4] = {1.0, 2.0};
  expect_rejected(d, at + "/lane_centerline[1]/points[4] has 2 entries, expected 3");
  d = valid_document();
  d["results"]["val/seg/7"]["predictions"]["traffic_element"][0]["points"] = {{1, 2}, {3, 4}, {5, 6}};
  expect_rejected(d, at + "/traffic_element[0]/points has 3 entries, expected 2");
  d = valid_document();
  d["results"]["val/seg/7"]["predictions"]["traffic_element"][0]["attribute"] = 2.5;
  expect_rejected(d, at + "/traffic_element[0]/attribute is 2.5, expected an integer");
  d = valid_document();
  d["results"]["val/seg/7"]["predictions"]["lane_centerline"][0]["confidence"] = "high";
  expect_rejected(d, at + "/lane_centerline[0]/confidence is string, expected a number");
  d = valid_document();
  d["results"]["val/seg/7"]["predictions"]["topology_lclc"][1] = 0.5;
  expect_rejected(d, at + "/topology_lclc[1] is number, expected a list");
  d = valid_document();
  d["results"]["val-seg-7"] = d["results"]["val/seg/7"];
  expect_rejected(d, "results/val-seg-7 is not a \"split/segment_id/timestamp\" key");
}

}  // namespace
}  // namespace halo::eval
