// The memory tab on a run built from step events: predicted parts add up to the planner's
// peak, the measured peak sits beside it with its error (flagged over 10 %), and the step
// timeline has a curve per rank with the peak marked where the planner puts it, and the
// measured timeline on the same operations.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include <qcustomplot.h>

#include "CoreChecks.h"
#include "GuiTestSupport.h"
#include "MemoryBreakdown.h"
#include "MemoryView.h"
#include "RunModel.h"
#include "config/ExperimentConfig.h"
#include "memory/StepSimulator.h"

namespace halo::gui {
namespace {

using nlohmann::json;

double fixed_of(const memory::RankPrediction& r) {
  return static_cast<double>(r.weights + r.gradients + r.optimizer_state + r.scaler_and_buffers);
}

// Workers report whole bytes.
int64_t measured_peak(double scale, const memory::RankPrediction& r) {
  return std::llround(scale * static_cast<double>(r.peak));
}

// A tiny tp2 run whose ranks report `scale` times the predicted peak; with `fixed_scale`
// > 0 the steps also report their starting level (memory.step_start) at that times the
// predicted weights + optimizer state.
std::unique_ptr<RunModel> run_at(double scale, memory::Prediction* out = nullptr, double fixed_scale = 0) {
  auto run = std::make_unique<RunModel>();
  const auto cfg = config::parse_experiment(testing::tiny_experiment(5)).config;
  run->set_config(config::to_json(cfg));
  const auto p = CoreChecks::predict(cfg);
  EXPECT_TRUE(p.has_value());
  if (out) *out = *p;
  for (int s = 0; s < 3; ++s)
    for (int r = 0; r < 2; ++r)
      run->add_line(json{{"event", "step"},
                         {"rank", r},
                         {"step", s},
                         {"losses", {{"loss", 1.0}}},
                         {"memory",
                          {{"current", 1000},
                           {"peak", measured_peak(scale, p->ranks[r])},
                           {"step_start", static_cast<int64_t>(fixed_scale * fixed_of(p->ranks[r]))}}}}
                        .dump());
  return run;
}

TEST(MemoryView, PredictedPartsAddUpAndTheMeasuredPeakIsBesideThem) {
  memory::Prediction p;
  auto run = run_at(1.02, &p);
  MemoryView v;
  v.set_run(run.get());
  ASSERT_EQ(v.predicted().size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    double sum = 0;
    for (const auto& part : v.predicted()[r].parts) sum += part.value_or(0);
    EXPECT_DOUBLE_EQ(sum, static_cast<double>(p.ranks[r].peak)) << r;
    // Gradients are made in backward: a part of the step above the state, as many as by the
    // peak; the parts add up to the peak wherever it falls.
    const auto grads = v.predicted()[r].parts[MemoryBreakdown::Gradients];
    ASSERT_TRUE(grads.has_value());
    EXPECT_DOUBLE_EQ(*grads, static_cast<double>(p.ranks[r].gradients_at_peak)) << r;
    EXPECT_DOUBLE_EQ(v.measured()[r].peak, static_cast<double>(measured_peak(1.02, p.ranks[r])));
  }
  EXPECT_TRUE(v.flagged().isEmpty()) << v.flagged().join("; ").toStdString();  // 2 % off: fine
  EXPECT_GT(v.breakdown_plot()->plottableCount(), MemoryBreakdown::kParts - 1);
  EXPECT_GT(v.table()->rowCount(), 0);
}

TEST(MemoryView, ErrorsOverTenPercentAreFlagged) {
  auto run = run_at(1.2);
  MemoryView v;
  v.set_run(run.get());
  ASSERT_EQ(v.flagged().size(), 2) << v.flagged().join("; ").toStdString();  // the peak of each rank
  EXPECT_TRUE(v.flagged().front().contains("peak: 20.0 %")) << v.flagged().front().toStdString();
  const auto errs = MemoryBreakdown::errors(v.predicted()[0], v.measured()[0]);
  ASSERT_FALSE(errs.empty());
  EXPECT_NEAR(errs.back().relative, 0.2, 1e-6);  // the peak rounded to whole bytes
  EXPECT_TRUE(errs.back().flagged);
}

TEST(MemoryView, StepStartSplitsTheMeasuredBarIntoStateAndActivations) {
  memory::Prediction p;
  auto run = run_at(1.0, &p, 1.5);  // the state 50 % above the prediction
  MemoryView v;
  v.set_run(run.get());
  const MemoryBreakdown& m = v.measured()[0];
  ASSERT_TRUE(m.fixed.has_value());
  EXPECT_NEAR(*m.fixed, 1.5 * fixed_of(p.ranks[0]), 1.0);
  ASSERT_TRUE(m.activations.has_value());
  EXPECT_NEAR(*m.activations, static_cast<double>(p.ranks[0].peak) - *m.fixed, 1.0);
  bool state_flagged = false;
  for (const QString& f : v.flagged()) state_flagged = state_flagged || f.contains("weights + optimizer");
  EXPECT_TRUE(state_flagged) << v.flagged().join("; ").toStdString();
  // Step 0 (no moments yet) is left out: a run of one step has no split.
  auto one = std::make_unique<RunModel>();
  one->set_config(run->config());
  one->add_line(
      json{{"event", "step"}, {"rank", 0}, {"step", 0}, {"memory", {{"peak", 100}, {"step_start", 10}}}}.dump());
  EXPECT_FALSE(MemoryBreakdown::measured(*one, 0).fixed.has_value());
}

TEST(MemoryView, TimelineHasEachRankAndMarksThePeak) {
  memory::Prediction p;
  auto run = run_at(1.0, &p);
  MemoryView v;
  v.set_run(run.get());
  EXPECT_EQ(v.timeline_curves(), 2);
  EXPECT_TRUE(v.peak_text().contains(QString::fromStdString(p.worst().peak_at))) << v.peak_text().toStdString();
  // The curve's top is the simulated step's peak above the fixed state.
  const QCPGraph* g = v.timeline_plot()->graph(0);
  double top = 0;
  for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) top = std::max(top, it->value);
  const auto& r0 = p.ranks[0];
  const auto step = memory::simulate_step(r0.layers, memory::checkpoint_segments(r0.layers, p.checkpoint), r0.inputs);
  const double fixed = static_cast<double>(r0.weights + r0.gradients + r0.optimizer_state + r0.scaler_and_buffers);
  EXPECT_NEAR(top * 1024 * 1024, fixed + static_cast<double>(step.peak), 1.0);
  EXPECT_LE(top * 1024 * 1024, static_cast<double>(r0.peak) + 1.0);
}

// The ranks' measured timelines: a solid curve per rank on the planner's operations of the same
// name (its own points after them), the measured peak marked with its place and rank.
TEST(MemoryView, MeasuredTimelineLiesOnThePlannersOperationsAndMarksItsPeak) {
  memory::Prediction p;
  auto run = run_at(1.0, &p);
  const auto& layers = p.ranks[0].layers;
  ASSERT_GE(layers.size(), 3u);
  const std::string backward = "backward of " + layers[1].name;
  for (int r = 0; r < 2; ++r) {
    json points = json::array();
    points.push_back({{"where", "forward of " + layers[0].name}, {"high", 3 << 20}, {"after", 2 << 20}});
    points.push_back({{"where", backward}, {"high", (8 + r) << 20}, {"after", 4 << 20}});
    points.push_back({{"where", "optimizer step"}, {"high", 5 << 20}, {"after", 4 << 20}});
    run->add_line(
        json{{"event", "memory_timeline"}, {"rank", r}, {"step", 1}, {"start", 1 << 20}, {"points", points}}.dump());
  }
  MemoryView v;
  v.set_run(run.get());
  EXPECT_EQ(v.timeline_curves("predicted"), 2);
  EXPECT_EQ(v.timeline_curves("measured"), 2);
  std::vector<memory::TracePoint> trace;
  memory::simulate_step(layers, memory::checkpoint_segments(layers, p.checkpoint), p.ranks[0].inputs, &trace);
  double predicted_x = -1;
  for (size_t i = 0; i < trace.size() && predicted_x < 0; ++i)
    if (trace[i].where == backward) predicted_x = static_cast<double>(i);
  ASSERT_GE(predicted_x, 0) << backward;
  const QCPGraph* measured = nullptr;
  for (int i = 0; i < v.timeline_plot()->graphCount(); ++i)
    if (v.timeline_plot()->graph(i)->name().startsWith("rank 1 measured")) measured = v.timeline_plot()->graph(i);
  ASSERT_NE(measured, nullptr);
  ASSERT_EQ(measured->data()->size(), 3);
  std::map<double, double> at;  // x -> MiB
  for (auto it = measured->data()->constBegin(); it != measured->data()->constEnd(); ++it) at[it->key] = it->value;
  EXPECT_DOUBLE_EQ(at.at(predicted_x), 9.0);
  EXPECT_GE(at.rbegin()->first, static_cast<double>(trace.size()));  // "optimizer step": after the walk
  EXPECT_TRUE(v.measured_peak_text().contains(QString::fromStdString(backward)) &&
              v.measured_peak_text().contains("rank 1"))
      << v.measured_peak_text().toStdString();
  EXPECT_TRUE(v.measured_peak_text().contains("9.0 MiB")) << v.measured_peak_text().toStdString();
}

}  // namespace
}  // namespace halo::gui
