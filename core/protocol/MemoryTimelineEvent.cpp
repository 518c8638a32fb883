// The memory timeline event's JSON: the step, its starting bytes and an array of points
// ({"where", "high", "after"}), every field optional on reading.
#include "protocol/MemoryTimelineEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

namespace {
constexpr char kStep[] = "step", kStart[] = "start", kDevice[] = "device", kPoints[] = "points";
constexpr char kWhere[] = "where", kHigh[] = "high", kAfter[] = "after";
}  // namespace

void to_json(nlohmann::json& j, const MemoryTimelineEvent& e) {
  nlohmann::json points = nlohmann::json::array();
  for (const TimelinePoint& p : e.points) points.push_back({{kWhere, p.where}, {kHigh, p.high}, {kAfter, p.after}});
  j = {{keys::event, MemoryTimelineEvent::name},
       {keys::rank, e.rank},
       {kStep, e.step},
       {kStart, e.start},
       {kDevice, e.device},
       {kPoints, std::move(points)}};
}

void from_json(const nlohmann::json& j, MemoryTimelineEvent& e) {
  const FieldReader r = FieldReader::event(j, MemoryTimelineEvent::name);
  e.rank = static_cast<int>(r.integer(keys::rank));
  e.step = r.integer(kStep);
  e.start = r.integer(kStart);
  e.device = r.text(kDevice, "cpu");
  e.points.clear();
  for (const FieldReader& p : r.objects(kPoints))
    e.points.push_back({p.text(kWhere), p.integer(kHigh), p.integer(kAfter)});
}

}  // namespace halo::protocol
