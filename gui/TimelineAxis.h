// The memory timeline's x axis: the planner's operations of one step in order, with the
// measured points placed on the operation of the same name; the others follow at the end.
#pragma once

#include <QString>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace halo::gui {

class TimelineAxis {
 public:
  // predicted: the planner's operation names in order ("forward of stem", "backward of
  // stages.0.blocks.2 (recompute)"); empty when there is no prediction.
  explicit TimelineAxis(const std::vector<std::string>& predicted);
  // The x of a measured point: the predicted operation it names ("(recompute)" aside), else a
  // new position after every other, the same one for the same name.
  double x_of(const std::string& where);
  // A tick where the stage changes ("forward stages.1", "backward stem") and one per extra point.
  std::vector<std::pair<double, QString>> ticks() const;

 private:
  static std::string key_of(const std::string& where);  // without " (recompute)"
  std::vector<std::string> names_;                      // every position's name, in x order
  std::map<std::string, double> x_;                     // by key
};

}  // namespace halo::gui
