// The step event's keys and their JSON. A non-finite value (a diverged loss) is written as
// null by nlohmann and read back as NaN; only "step" is required.
#include "protocol/StepEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

namespace {
constexpr char kStep[] = "step", kLosses[] = "losses", kLr[] = "lr", kGradNorm[] = "grad_norm",
               kLossScale[] = "loss_scale", kSkipped[] = "skipped", kTimeMs[] = "time_ms", kMemory[] = "memory",
               kSamplesPerS[] = "samples_per_s";
constexpr char kLoss[] = "loss";  // the losses entry the progress line and `halo launch` report
constexpr char kForward[] = "forward", kBackward[] = "backward", kComm[] = "comm", kOptim[] = "optim",
               kTotal[] = "total";
constexpr char kCurrent[] = "current", kPeak[] = "peak", kReserved[] = "reserved", kRss[] = "rss",
               kStepStart[] = "step_start";
}  // namespace

double StepEvent::loss() const {
  const auto it = losses.find(kLoss);
  return it == losses.end() ? 0.0 : it->second;
}

std::vector<std::pair<std::string, double>> StepEvent::metrics() const {
  std::vector<std::pair<std::string, double>> out(losses.begin(), losses.end());
  out.insert(out.end(), {{kLr, lr}, {kGradNorm, grad_norm}, {kLossScale, loss_scale}});
  const std::string t = std::string(kTimeMs) + ".";
  out.insert(out.end(), {{t + kBackward, time_ms.backward},
                         {t + kComm, time_ms.comm},
                         {t + kForward, time_ms.forward},
                         {t + kOptim, time_ms.optim},
                         {t + kTotal, time_ms.total}});
  return out;
}

void to_json(nlohmann::json& j, const StepEvent& e) {
  const StepTimes& t = e.time_ms;
  const StepMemory& m = e.memory;
  j = {{keys::event, StepEvent::name},
       {keys::rank, e.rank},
       {kStep, e.step},
       {kLosses, e.losses},
       {kLr, e.lr},
       {kGradNorm, e.grad_norm},
       {kLossScale, e.loss_scale},
       {kSkipped, e.skipped},
       {kTimeMs,
        {{kForward, t.forward}, {kBackward, t.backward}, {kComm, t.comm}, {kOptim, t.optim}, {kTotal, t.total}}},
       {kMemory,
        {{kCurrent, m.current}, {kPeak, m.peak}, {kReserved, m.reserved}, {kRss, m.rss}, {kStepStart, m.step_start}}},
       {kSamplesPerS, e.samples_per_s}};
}

void from_json(const nlohmann::json& j, StepEvent& e) {
  const FieldReader r = FieldReader::event(j, StepEvent::name);
  r.require(kStep);
  e.rank = static_cast<int>(r.integer(keys::rank));
  e.step = r.integer(kStep);
  e.losses = r.numbers(kLosses);
  e.lr = r.number(kLr);
  e.grad_norm = r.number(kGradNorm);
  e.loss_scale = r.number(kLossScale, 1);
  e.skipped = r.boolean(kSkipped);
  const FieldReader t = r.object(kTimeMs);
  e.time_ms = {t.number(kForward), t.number(kBackward), t.number(kComm), t.number(kOptim), t.number(kTotal)};
  const FieldReader m = r.object(kMemory);
  e.memory = {m.integer(kCurrent), m.integer(kPeak), m.integer(kReserved), m.integer(kRss), m.integer(kStepStart)};
  e.samples_per_s = r.number(kSamplesPerS);
}

}  // namespace halo::protocol
