// Positions are indices: the planner's operation i at x = i, extra measured points from the
// planner's count on. Ticks group "forward of stages.1.blocks.0" into "forward stages.1".
#include "TimelineAxis.h"

namespace halo::gui {

namespace {
constexpr char kRecompute[] = " (recompute)";  // the planner's suffix inside a checkpointed segment

// "backward of stages.1.blocks.0" -> "backward stages.1"; "gradient sync" stays itself.
QString stage_group(const std::string& where) {
  const QString w = QString::fromStdString(where).remove(kRecompute);
  if (!w.contains(" of ")) return w;
  return w.section(' ', 0, 0) + " " + w.section(' ', -1).section('.', 0, 1);
}
}  // namespace

TimelineAxis::TimelineAxis(const std::vector<std::string>& predicted) : names_(predicted) {
  for (size_t i = 0; i < predicted.size(); ++i) x_.try_emplace(key_of(predicted[i]), static_cast<double>(i));
}

std::string TimelineAxis::key_of(const std::string& where) {
  const std::string tail = kRecompute;
  if (where.size() > tail.size() && where.compare(where.size() - tail.size(), tail.size(), tail) == 0)
    return where.substr(0, where.size() - tail.size());
  return where;
}

double TimelineAxis::x_of(const std::string& where) {
  const auto [it, added] = x_.try_emplace(key_of(where), static_cast<double>(names_.size()));
  if (added) names_.push_back(where);
  return it->second;
}

std::vector<std::pair<double, QString>> TimelineAxis::ticks() const {
  std::vector<std::pair<double, QString>> out;
  QString last;
  for (size_t i = 0; i < names_.size(); ++i) {
    const QString g = stage_group(names_[i]);
    if (g != last) out.emplace_back(static_cast<double>(i), g);
    last = g;
  }
  return out;
}

}  // namespace halo::gui
