// The field list a form is built from: one entry per field to_json writes, with the parser's
// own ranges (a value outside is a problem, inside is not), enum choices and task.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "config/ExperimentConfig.h"
#include "config/FieldInfo.h"

namespace halo::config {
namespace {

using nlohmann::json;

const json* at(const json& j, const std::string& path) {
  const json* node = &j;
  for (size_t from = 0; from <= path.size();) {
    const size_t dot = std::min(path.find('.', from), path.size());
    const std::string part = path.substr(from, dot - from);
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
    from = dot + 1;
  }
  return node;
}

TEST(FieldInfo, ListsEveryFieldOfTheConfigWithItsDefault) {
  const json defaults = to_json(ExperimentConfig{});
  const auto fields = field_list();
  size_t leaves = 0;
  for (const auto& [k, v] : defaults.items()) leaves += v.is_object() ? v.size() : 1;
  EXPECT_EQ(fields.size(), leaves);
  std::set<std::string> seen;
  for (const FieldInfo& f : fields) {
    EXPECT_TRUE(seen.insert(f.path).second) << f.path;
    const json* v = at(defaults, f.path);
    ASSERT_NE(v, nullptr) << f.path;
    EXPECT_EQ(*v, f.default_value) << f.path;
    EXPECT_EQ(f.section().empty(), f.path.find('.') == std::string::npos);
  }
}

TEST(FieldInfo, KindsChoicesAndTasks) {
  std::map<std::string, FieldInfo> by;
  for (const FieldInfo& f : field_list()) by[f.path] = f;
  EXPECT_EQ(by["parallel.strategy"].kind, FieldInfo::Kind::Choice);
  EXPECT_EQ(by["parallel.strategy"].choices, (std::vector<std::string>{"none", "checkpoint", "tp", "tp+checkpoint"}));
  EXPECT_EQ(by["data.width"].kind, FieldInfo::Kind::Integer);
  EXPECT_EQ(by["data.width"].lo, 32);
  EXPECT_EQ(by["optim.lr"].kind, FieldInfo::Kind::Real);
  EXPECT_TRUE(by["optim.lr"].lo_open);
  EXPECT_EQ(by["optim.scale_lr"].kind, FieldInfo::Kind::Boolean);
  EXPECT_EQ(by["name"].kind, FieldInfo::Kind::Text);
  EXPECT_EQ(by["optim.lr"].key(), "lr");
  EXPECT_EQ(by["optim.lr"].section(), "optim");
  EXPECT_EQ(by["model.num_classes"].task, Task::Convnext);
  EXPECT_EQ(by["model.dim"].task, Task::OpenLaneV2);
  EXPECT_EQ(by["loss.lclc"].task, Task::OpenLaneV2);
  EXPECT_FALSE(by["data.width"].task.has_value());
}

TEST(FieldInfo, IntegerRangesAreTheParsers) {
  for (const FieldInfo& f : field_list()) {
    if (f.kind != FieldInfo::Kind::Integer || f.hi > 1e12) continue;
    json j = json::object();
    j[f.section()][f.key()] = static_cast<int64_t>(f.lo);
    if (f.section().empty()) j = {{f.key(), static_cast<int64_t>(f.lo)}};
    auto has_problem = [&](const json& e) {
      for (const auto& p : parse_experiment(e).problems)
        if (p.field == f.path && p.fix.starts_with("use an integer")) return true;
      return false;
    };
    EXPECT_FALSE(has_problem(j)) << f.path << " = " << f.lo;
    j[f.section()][f.key()] = static_cast<int64_t>(f.lo) - 1;
    EXPECT_TRUE(has_problem(j)) << f.path << " = " << f.lo - 1;
  }
}

}  // namespace
}  // namespace halo::config
