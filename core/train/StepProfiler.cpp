// Self time per op: each thread's events sorted by start, nested by their intervals, a
// parent's self time its duration less its children's; GPU kernels summed by name.
#include "train/StepProfiler.h"

#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "util/Error.h"

namespace halo::train {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

namespace {

struct Span {
  uint64_t start, end;
  std::string name;
};

// Autograd's engine wraps every backward node in "autograd::engine::evaluate_function: X"
// around X itself: those wrappers are nesting only (no row; their few microseconds dropped).
const std::string kEngineWrapper = "autograd::engine::evaluate_function: ";

// A custom function's node, "torch::autograd::CppNode<ns::(anonymous namespace)::F>", as "F".
std::string short_name(const std::string& n) {
  const auto cpp = n.find("CppNode<");
  if (cpp == std::string::npos || n.rfind(kEngineWrapper, 0) == 0) return n;
  std::string s = n.substr(cpp + 8);
  if (!s.empty() && s.back() == '>') s.pop_back();
  if (const auto colon = s.rfind("::"); colon != std::string::npos) s = s.substr(colon + 2);
  return s;
}

}  // namespace

void to_json(nlohmann::json& j, const StepProfile& p) {
  j = {{"step_ms", p.step_ms}, {"ops_self_ms", p.ops_self_ms}, {"gpu_ms", p.gpu_ms}, {"ops", nlohmann::json::array()}};
  for (const OpTime& o : p.ops)
    j["ops"].push_back(
        {{"name", o.name}, {"self_ms", o.self_ms}, {"total_ms", o.total_ms}, {"calls", o.calls}, {"gpu", o.gpu}});
}

void from_json(const nlohmann::json& j, StepProfile& p) {
  try {
    p.step_ms = j.at("step_ms").get<double>();
    p.ops_self_ms = j.at("ops_self_ms").get<double>();
    p.gpu_ms = j.value("gpu_ms", 0.0);
    p.ops.clear();
    for (const auto& o : j.at("ops"))
      p.ops.push_back({o.at("name").get<std::string>(), o.at("self_ms").get<double>(), o.at("total_ms").get<double>(),
                       o.at("calls").get<int64_t>(), o.value("gpu", false)});
  } catch (const nlohmann::json::exception& e) {
    throw util::Error(std::string("a step profile is malformed: ") + e.what());
  }
}

StepProfiler::StepProfiler() = default;

StepProfiler::~StepProfiler() {
  if (running_) (void)prof::disableProfiler();
}

void StepProfiler::start(bool cuda) {
  const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/false);
  std::set<ActivityType> activities{ActivityType::CPU};
  if (cuda) activities.insert(ActivityType::CUDA);
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  thread_ = at::RecordFunction::currentThreadId();
  running_ = true;
}

StepProfile StepProfiler::stop(double step_ms) {
  auto result = prof::disableProfiler();
  running_ = false;
  std::map<uint64_t, std::vector<Span>> by_thread;
  std::map<std::string, OpTime> ops, kernels;
  for (const auto& ev : result->events()) {
    if (ev.deviceType() != c10::DeviceType::CPU) {  // a kernel, copy or memset: the device's time
      OpTime& k = kernels[ev.name()];
      k.name = ev.name();
      k.gpu = true;
      k.self_ms += static_cast<double>(ev.durationNs()) / 1e6;
      k.total_ms = k.self_ms;
      ++k.calls;
      continue;
    }
    by_thread[ev.startThreadId()].push_back(
        {ev.startNs(), ev.endNs(), short_name(ev.name()) + (ev.startThreadId() == thread_ ? "" : " (other thread)")});
  }
  for (auto& [thread, spans] : by_thread) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); });
    std::vector<std::pair<size_t, double>> open;  // span index, its children's time (ms)
    auto close = [&] {
      const auto [i, children] = open.back();
      open.pop_back();
      const double ms = static_cast<double>(spans[i].end - spans[i].start) / 1e6;
      if (!open.empty()) open.back().second += ms;
      if (spans[i].name.rfind(kEngineWrapper, 0) == 0) return;
      OpTime& o = ops[spans[i].name];
      o.name = spans[i].name;
      o.self_ms += std::max(0.0, ms - children);
      o.total_ms += ms;
      ++o.calls;
    };
    for (size_t i = 0; i < spans.size(); ++i) {
      while (!open.empty() && spans[open.back().first].end <= spans[i].start) close();
      open.push_back({i, 0.0});
    }
    while (!open.empty()) close();
  }
  StepProfile p;
  p.step_ms = step_ms;
  for (auto& [name, o] : ops) {
    if (!name.ends_with(" (other thread)")) p.ops_self_ms += o.self_ms;
    p.ops.push_back(std::move(o));
  }
  for (auto& [name, k] : kernels) {
    p.gpu_ms += k.self_ms;
    p.ops.push_back(std::move(k));
  }
  std::sort(p.ops.begin(), p.ops.end(), [](const OpTime& a, const OpTime& b) { return a.self_ms > b.self_ms; });
  return p;
}

}  // namespace halo::train
