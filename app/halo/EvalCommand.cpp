// `halo eval --gt DIR [--split val] --pred PRED.json [--json]`: the OpenLane-V2 score
// (DET_l, DET_t, TOP_ll, TOP_lt, OLS) of a prediction file, as the openlanev2 devkit computes it.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "Commands.h"
#include "data/FrameReader.h"
#include "eval/Evaluate.h"
#include "eval/PredictionsJson.h"

namespace halo::app {
namespace {

struct EvalArgs {
  std::string gt, split = "val", split_file, pred;
  bool json = false;
};

const char* const kAttributes[13] = {"unknown",   "red",         "green",        "yellow",        "go_straight",
                                     "turn_left", "turn_right",  "no_left_turn", "no_right_turn", "u_turn",
                                     "no_u_turn", "slight_left", "slight_right"};

// "\r"-updated line on a terminal's stderr: frames scored and the time left.
eval::Progress progress_line() {
  if (!::isatty(STDERR_FILENO)) return {};
  const auto start = std::chrono::steady_clock::now();
  return [start](int64_t done, int64_t total) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total - done) : 0.0;
    std::fprintf(stderr, "\rscoring frames %lld/%lld  ETA %.0f s   ", static_cast<long long>(done),
                 static_cast<long long>(total), eta);
    if (done == total) std::fprintf(stderr, "\n");
  };
}

void run_eval(const EvalArgs& a) {
  const auto refs = data::list_frames(a.gt, a.split, a.split_file);
  std::vector<data::Frame> frames;
  frames.reserve(refs.size());
  for (const auto& r : refs) frames.push_back(data::read_frame(a.gt, r));
  const eval::Scores s =
      eval::evaluate(frames, eval::read_predictions(a.pred), a.json ? eval::Progress{} : progress_line());
  if (a.json) {
    std::printf("%s\n",
                nlohmann::json{
                    {"DET_l", s.det_l}, {"DET_t", s.det_t}, {"TOP_ll", s.top_ll}, {"TOP_lt", s.top_lt}, {"OLS", s.ols}}
                    .dump(2)
                    .c_str());
    return;
  }
  std::printf("OpenLane-V2 score of %s on %s/%s (%lld frames)\n\n", a.pred.c_str(), a.gt.c_str(), a.split.c_str(),
              static_cast<long long>(s.frames));
  std::printf("%-22s %8s\n", "metric", "value");
  const std::pair<const char*, double> rows[] = {
      {"DET_l", s.det_l}, {"DET_t", s.det_t}, {"TOP_ll", s.top_ll}, {"TOP_lt", s.top_lt}, {"OLS", s.ols}};
  for (const auto& [name, v] : rows) std::printf("%-22s %8.4f\n", name, v);
  std::printf("\nDET_t per attribute\n");
  for (size_t i = 0; i < 13; ++i) std::printf("  %-20s %8.4f\n", kAttributes[i], s.det_t_per_attribute[i]);
}

}  // namespace

void add_eval_commands(CLI::App& app) {
  auto a = std::make_shared<EvalArgs>();
  auto* e = app.add_subcommand(
      "eval",
      "Score predictions with the OpenLane-V2 metric (DET_l, DET_t, TOP_ll, TOP_lt, OLS), as the openlanev2 "
      "devkit 2.1.0 does.\nPRED.json is the devkit's prediction dict with keys \"split/segment_id/timestamp\": "
      "{\"results\": {KEY: {\"predictions\": {\"lane_centerline\": [{id, points [[x,y,z],...], confidence}], "
      "\"traffic_element\": [{id, attribute, points [[x1,y1],[x2,y2]], confidence}], \"topology_lclc\": "
      "#lanes x #lanes, \"topology_lcte\": #lanes x #elements}}}}; every frame of the split must be present.");
  e->add_option("--gt", a->gt, "dataset root with <split>/<segment>/info/<timestamp>.json ground truth")->required();
  e->add_option("--split", a->split, "split to score")->capture_default_str();
  e->add_option("--split-file", a->split_file, "data_dict JSON listing the split's frames (default: all frames found)");
  e->add_option("--pred", a->pred, "prediction file (JSON, see above)")->required();
  e->add_flag("--json", a->json, "print {DET_l, DET_t, TOP_ll, TOP_lt, OLS} as JSON");
  e->callback([a]() { run_eval(*a); });
}

}  // namespace halo::app
