// The experiment's settings as a list a form or a table is built from: each field's path,
// kind, allowed values, default and task, read from the same field table the parser walks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/Enums.h"

namespace halo::config {

struct FieldInfo {
  enum class Kind { Text, Choice, Integer, Real, Boolean };
  std::string path;  // "optim.lr"
  Kind kind = Kind::Text;
  std::vector<std::string> choices;  // Choice: the enum's spellings, in table order
  double lo = 0, hi = 0;             // Integer and Real: the allowed range
  bool lo_open = false, hi_open = false;
  nlohmann::json default_value;  // as to_json writes it
  std::optional<Task> task;      // used only by this task (model.num_classes, model.dim, loss.*)

  std::string section() const;  // "optim"; "" for top-level fields
  std::string key() const;      // "lr"
};

// Every field in the order of the field table (sections in order, then their fields).
std::vector<FieldInfo> field_list();

}  // namespace halo::config
