// The eval event's keys and their JSON (the scores keep the devkit's names); only "step" is
// required on reading.
#include "protocol/EvalEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

namespace {
constexpr char kStep[] = "step", kStepsTrained[] = "steps_trained", kSplit[] = "split", kDetL[] = "DET_l",
               kDetT[] = "DET_t", kTopLl[] = "TOP_ll", kTopLt[] = "TOP_lt", kOls[] = "OLS", kFrames[] = "frames",
               kPredictions[] = "predictions";
}

std::vector<std::pair<std::string, double>> EvalEvent::scores() const {
  return {{kDetL, det_l}, {kDetT, det_t}, {kTopLl, top_ll}, {kTopLt, top_lt}, {kOls, ols}};
}

void to_json(nlohmann::json& j, const EvalEvent& e) {
  j = {{keys::event, EvalEvent::name},
       {keys::rank, e.rank},
       {kStep, e.step},
       {kStepsTrained, e.steps_trained},
       {kSplit, e.split},
       {kDetL, e.det_l},
       {kDetT, e.det_t},
       {kTopLl, e.top_ll},
       {kTopLt, e.top_lt},
       {kOls, e.ols},
       {kFrames, e.frames},
       {kPredictions, e.predictions}};
}

void from_json(const nlohmann::json& j, EvalEvent& e) {
  const FieldReader r = FieldReader::event(j, EvalEvent::name);
  r.require(kStep);
  e.rank = static_cast<int>(r.integer(keys::rank));
  e.step = r.integer(kStep);
  e.steps_trained = r.integer(kStepsTrained);
  e.split = r.text(kSplit);
  e.det_l = r.number(kDetL);
  e.det_t = r.number(kDetT);
  e.top_ll = r.number(kTopLl);
  e.top_lt = r.number(kTopLt);
  e.ols = r.number(kOls);
  e.frames = r.integer(kFrames);
  e.predictions = r.text(kPredictions);
}

}  // namespace halo::protocol
