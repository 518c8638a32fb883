// One table of fields (visit_fields) is walked by the reader, the writer and the
// unknown-key check, so defaults, validation and serialisation cannot drift apart.
#include "config/ExperimentConfig.h"

#include "config/FieldInfo.h"
#include "config/KeySuggestion.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "arch/Backbones.h"
#include "util/Error.h"

namespace halo::config {

using nlohmann::json;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kBillion = 1'000'000'000;

struct Interval {  // a real interval, each end open or closed; finite values only
  double lo = -kInf, hi = kInf;
  bool lo_open = false, hi_open = false;
  bool contains(double v) const {
    return std::isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  }
  std::string describe() const {
    if (std::isinf(hi)) return fmt::format("a finite number {} {}", lo_open ? ">" : ">=", lo);
    return fmt::format("a number in {}{}, {}{}", lo_open ? "(" : "[", lo, hi, hi_open ? ")" : "]");
  }
};
constexpr Interval kPositive{0, kInf, true, false};
constexpr Interval kNonNegative{0, kInf, false, false};
constexpr Interval kUnitOpen{0, 1, false, true};
constexpr Interval kUnit{0, 1, false, false};

using Choices = std::initializer_list<std::string_view>;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char ch : s) ch == sep ? out.emplace_back() : out.back() += ch;
  return out;
}

// The value as the user wrote it (NaN/Inf, which JSON cannot hold, by name).
// Nesting depth of v, counted up to `limit` + 1 (the recursion stops there).
int nesting(const json& v, int limit) {
  int most = 0;
  if (limit >= 0 && v.is_structured())
    for (const auto& child : v) most = std::max(most, 1 + nesting(child, limit - 1));
  return most;
}

// Deeply nested values (hostile files) are not serialized: dump() recurses per level.
std::string show(const json& v) {
  const double d = v.is_number_float() ? v.get<double>() : 0.0;
  if (!std::isfinite(d)) return std::isnan(d) ? "nan" : (d > 0 ? "inf" : "-inf");
  if (nesting(v, 32) > 32)
    return v.is_array() ? "[[[...]]] (nested more than 32 levels)" : "{...} (nested more than 32 levels)";
  const std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string type_of(const json& v) {  // "a string", "an object", "null", ...
  return v.is_null() ? "null" : std::string(v.is_object() || v.is_array() ? "an " : "a ") + v.type_name();
}

// A whole number that fits int64 (integral floats such as 1e3 count), else nullopt.
std::optional<int64_t> whole(const json& v) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) return std::nullopt;
  if (v.is_number_integer()) return v.get<int64_t>();  // signed or unsigned
  const double d = v.is_number_float() ? v.get<double>() : kInf;
  return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.2e18 ? std::optional(static_cast<int64_t>(d))
                                                                         : std::nullopt;
}

struct Range {
  int64_t lo, hi;
};              // inclusive integer range
struct Any {};  // any value of the field's type

// Reads each field from the JSON into the config, recording a problem per bad value.
class Reader {
 public:
  Reader(const json& root, ConfigResult& out) : root_(root), out_(out) {}
  std::set<std::string> known, sections, bad;

  void section(const std::string& key) {
    known.insert(key);
    sections.insert(key);
    if (auto it = root_.find(key); it != root_.end() && !it->is_object())
      problem(key, *it,
              fmt::format("use an object of {} settings, e.g. \"{}\": {{...}}, not {}", key, key, type_of(*it)));
  }
  void field(const std::string& path, std::string& out, Any) { field(path, out, Choices{}); }
  void field(const std::string& path, std::string& out, Choices options) {
    field(path, out, std::vector<std::string_view>(options));
  }
  void field(const std::string& path, std::string& out, const std::vector<std::string_view>& options) {
    const json* v = find(path);
    if (!v) return;
    const std::string fix =
        options.size() ? fmt::format("choose one of: {}", fmt::join(options, ", ")) : "use a string";
    if (!v->is_string())
      return problem(path, *v, fix + (options.size() ? " (a string), not " : ", not ") + type_of(*v));
    if (options.size() && std::find(options.begin(), options.end(), v->get<std::string>()) == options.end())
      return problem(path, *v, fix);
    out = v->get<std::string>();
  }
  // A list of non-empty strings: a JSON array, or one string of comma-separated items.
  void field(const std::string& path, std::vector<std::string>& out, Any) {
    const json* v = find(path);
    if (!v) return;
    const std::string fix = "use a list of strings, e.g. [\"head.\"], or one string \"a.,b.\"";
    std::vector<std::string> items;
    if (v->is_string()) {
      for (const std::string& item : split(v->get<std::string>(), ',')) {
        const size_t first = item.find_first_not_of(' '), last = item.find_last_not_of(' ');
        if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
      }
    } else if (v->is_array()) {
      for (const json& item : *v) {
        if (!item.is_string() || item.get<std::string>().empty())
          return problem(path, *v, fix + " (each a non-empty string)");
        items.push_back(item.get<std::string>());
      }
    } else {
      return problem(path, *v, fix + ", not " + type_of(*v));
    }
    out = std::move(items);
  }
  template <class E>
  requires std::is_enum_v<E>
  void field(const std::string& path, E& out, Any) {
    std::string text(to_string(out));
    const std::vector<std::string_view> options = names<E>();
    field(path, text, options);
    if (auto e = from_string<E>(text)) out = *e;
  }
  template <class T>
  void field(const std::string& path, T& out, Range r) {
    const json* v = find(path);
    if (!v) return;
    const std::string want = fmt::format("use an integer from {} to {}", r.lo, r.hi);
    if (!v->is_number()) return problem(path, *v, want + ", not " + type_of(*v));
    const auto n = whole(*v);
    const double d = v->get<double>();
    const char* why = std::isfinite(d) && std::floor(d) != d ? " (not a whole number)" : "";
    if (!n || *n < r.lo || *n > r.hi) return problem(path, *v, want + why);
    out = static_cast<T>(*n);
  }
  void field(const std::string& path, uint64_t& out, Any) {
    const json* v = find(path);
    if (v && v->is_number_unsigned())
      out = v->get<uint64_t>();
    else if (auto n = v ? whole(*v) : std::nullopt; n && *n >= 0)
      out = static_cast<uint64_t>(*n);
    else if (v)
      problem(path, *v,
              fmt::format("use an integer from 0 to {}{}", UINT64_MAX, v->is_number() ? "" : ", not " + type_of(*v)));
  }
  void field(const std::string& path, double& out, Interval range) {
    const json* v = find(path);
    if (!v) return;
    if (!v->is_number()) return problem(path, *v, "use " + range.describe() + ", not " + type_of(*v));
    if (!range.contains(v->get<double>())) return problem(path, *v, "use " + range.describe());
    out = v->get<double>();
  }
  void field(const std::string& path, bool& out, Any) {
    const json* v = find(path);
    if (v && v->is_boolean())
      out = v->get<bool>();
    else if (v)
      problem(path, *v, "use a boolean (true or false), not " + type_of(*v));
  }

 private:
  // The value at a dotted path; nullptr when absent or under a non-object.
  const json* find(const std::string& path) {
    known.insert(path);
    const json* node = &root_;
    for (const auto& part : split(path, '.')) {
      auto it = node->find(part);  // end() for a non-object
      if (it == node->end()) return nullptr;
      node = &*it;
    }
    return node;
  }
  void problem(const std::string& path, const json& v, std::string fix) {
    out_.problems.push_back({path, show(v), std::move(fix)});
    bad.insert(path);
  }
  const json& root_;
  ConfigResult& out_;
};

// Writes each field at its dotted path.
struct Writer {
  json out = json::object();
  void section(const std::string& key) { out[key] = json::object(); }
  void field(const std::string& path, const std::string& v, Choices) { field(path, v, Any{}); }
  template <class E>
  requires std::is_enum_v<E>
  void field(const std::string& path, const E& v, Any) { field(path, std::string(to_string(v)), Any{}); }
  template <class T, class Rule>
  void field(std::string path, const T& v, Rule) {
    std::replace(path.begin(), path.end(), '.', '/');
    out[json::json_pointer("/" + path)] = v;
  }
};

// Every field, its JSON path, type and allowed values. Sections precede their fields.
template <class Config, class V>
void visit_fields(Config& c, V& v) {
  v.field("name", c.name, Any{});
  v.field("task", c.task, Any{});
  v.field("run_dir", c.run_dir, Any{});
  v.section("model");
  v.field("model.arch", c.model.arch, Any{});  // checked against the task below
  v.field("model.num_classes", c.model.num_classes, Range{1, 1'000'000});
  v.field("model.drop_path", c.model.drop_path, kUnitOpen);
  v.field("model.dim", c.model.dim, Range{8, 4096});
  v.field("model.pretrained", c.model.pretrained, Any{});
  v.field("model.pretrained_skip", c.model.pretrained_skip, Any{});
  v.section("loss");
  v.field("loss.lc_cls", c.loss.lc_cls, kNonNegative);
  v.field("loss.lc_bbox", c.loss.lc_bbox, kNonNegative);
  v.field("loss.te_cls", c.loss.te_cls, kNonNegative);
  v.field("loss.te_bbox", c.loss.te_bbox, kNonNegative);
  v.field("loss.te_iou", c.loss.te_iou, kNonNegative);
  v.field("loss.lclc", c.loss.lclc, kNonNegative);
  v.field("loss.lcte", c.loss.lcte, kNonNegative);
  v.section("data");
  v.field("data.source", c.data.source, Any{});
  v.field("data.root", c.data.root, Any{});
  v.field("data.eval_split", c.data.eval_split, Any{});
  v.field("data.views", c.data.views, Range{1, 64});
  v.field("data.height", c.data.height, Range{32, 65536});  // 32: the backbones' total stride
  v.field("data.width", c.data.width, Range{32, 65536});
  v.field("data.batch", c.data.batch, Range{1, 1'000'000});
  v.field("data.workers", c.data.workers, Range{0, 256});
  v.section("parallel");
  v.field("parallel.strategy", c.parallel.strategy, Any{});
  v.field("parallel.sp", c.parallel.sp, Range{1, 1024});
  v.field("parallel.dp", c.parallel.dp, Range{1, 1024});
  v.field("parallel.checkpoint_level", c.parallel.checkpoint_level, Any{});
  v.field("parallel.backend", c.parallel.backend, Any{});
  v.field("parallel.device", c.parallel.device, Any{});
  v.field("parallel.threads_per_rank", c.parallel.threads_per_rank, Range{1, 1024});
  v.field("parallel.shard_state", c.parallel.shard_state, Any{});
  v.field("parallel.recompute", c.parallel.recompute, Any{});
  v.field("parallel.pointwise", c.parallel.pointwise, Any{});
  v.section("optim");
  v.field("optim.name", c.optim.name, Any{});
  v.field("optim.lr", c.optim.lr, kPositive);
  v.field("optim.weight_decay", c.optim.weight_decay, kNonNegative);
  v.field("optim.momentum", c.optim.momentum, kUnitOpen);
  v.field("optim.beta1", c.optim.beta1, kUnitOpen);
  v.field("optim.beta2", c.optim.beta2, kUnitOpen);
  v.field("optim.eps", c.optim.eps, kPositive);
  v.field("optim.grad_clip", c.optim.grad_clip, kNonNegative);
  v.field("optim.scale_lr", c.optim.scale_lr, Any{});
  v.field("optim.base_batch", c.optim.base_batch, Range{1, kBillion});
  v.section("schedule");
  v.field("schedule.steps", c.schedule.steps, Range{1, kBillion});
  v.field("schedule.warmup_steps", c.schedule.warmup_steps, Range{0, kBillion});
  v.field("schedule.min_lr_ratio", c.schedule.min_lr_ratio, kUnit);
  v.section("train");
  v.field("train.accumulation", c.train.accumulation, Range{1, 65536});
  v.field("train.precision", c.train.precision, Any{});
  v.field("train.seed", c.train.seed, Any{});
  v.field("train.log_every", c.train.log_every, Range{1, kBillion});
  v.field("train.checkpoint_every", c.train.checkpoint_every, Range{0, kBillion});
  v.field("train.eval_every", c.train.eval_every, Range{0, kBillion});
  v.field("train.nonfinite", c.train.nonfinite, Any{});
}

// Describes each field (kind, range, default) for field_list().
struct Describer {
  std::vector<FieldInfo> out;
  void section(const std::string&) {}
  FieldInfo& add(const std::string& path, FieldInfo::Kind kind, json def) {
    out.push_back({path, kind, {}, 0, 0, false, false, std::move(def), task_of(path)});
    return out.back();
  }
  void field(const std::string& path, const std::string& v, Any) { add(path, FieldInfo::Kind::Text, v); }
  void field(const std::string& path, const std::vector<std::string>& v, Any) { add(path, FieldInfo::Kind::Text, v); }
  template <class E>
  requires std::is_enum_v<E>
  void field(const std::string& path, const E& v, Any) {
    FieldInfo& f = add(path, FieldInfo::Kind::Choice, std::string(to_string(v)));
    for (std::string_view n : names<E>()) f.choices.emplace_back(n);
  }
  template <class T>
  void field(const std::string& path, const T& v, Range r) {
    FieldInfo& f = add(path, FieldInfo::Kind::Integer, v);
    f.lo = static_cast<double>(r.lo), f.hi = static_cast<double>(r.hi);
  }
  void field(const std::string& path, const uint64_t& v, Any) {
    FieldInfo& f = add(path, FieldInfo::Kind::Integer, v);
    f.hi = static_cast<double>(UINT64_MAX);
  }
  void field(const std::string& path, const double& v, Interval r) {
    FieldInfo& f = add(path, FieldInfo::Kind::Real, v);
    f.lo = r.lo, f.hi = r.hi, f.lo_open = r.lo_open, f.hi_open = r.hi_open;
  }
  void field(const std::string& path, const bool& v, Any) { add(path, FieldInfo::Kind::Boolean, v); }
  // The fields one task alone reads: classes for classification, the neck width and the loss
  // weights for the OpenLane-V2 baseline.
  static std::optional<Task> task_of(const std::string& path) {
    if (path == "model.num_classes") return Task::Convnext;
    if (path == "model.dim" || path.starts_with("loss.")) return Task::OpenLaneV2;
    return std::nullopt;
  }
};

// Rules between fields; a rule is skipped when one of its fields already has a problem.
void check_combinations(const ExperimentConfig& c, const Reader& r, std::vector<ConfigProblem>& out) {
  auto ok = [&](std::initializer_list<std::string> paths) {
    return std::none_of(paths.begin(), paths.end(),
                        [&](const std::string& p) { return r.bad.count(p) || r.bad.count(p.substr(0, p.find('.'))); });
  };
  auto quote = [](const std::string& s) { return show(json(s)); };  // shortened like every value
  auto add = [&](std::string field, std::string value, std::string fix) { out.push_back({field, value, fix}); };
  auto name_char = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
  };
  const bool name_ok = !c.name.empty() && c.name.size() <= 100 && c.name[0] != '.';
  if (ok({"name"}) && !(name_ok && std::all_of(c.name.begin(), c.name.end(), name_char)))
    add("name", quote(c.name),
        "use 1-100 letters, digits, '-', '_' or '.', not starting with '.' (it names the run directory)");
  if (ok({"model.arch", "task"})) {
    if (!arch::backbone_family(c.model.arch))
      add("model.arch", quote(c.model.arch), "choose one of: " + arch::backbone_names());
    else if (c.model.drop_path > 0 && arch::backbone_family(c.model.arch) != arch::Family::ConvNeXt &&
             ok({"model.drop_path"}))
      add("model.drop_path", show(json(c.model.drop_path)),
          "stochastic depth is for ConvNeXt here; set model.drop_path to 0 for " + c.model.arch);
  }
  if (ok({"data.source", "data.root"}) && c.data.source == DataSource::OpenLaneV2 && c.data.root.empty())
    add("data.root", quote(c.data.root),
        "set data.root to the OpenLane-V2 directory, or use data.source \"synthetic\"");
  if (ok({"data.views", "data.source", "task"}) && c.task == Task::OpenLaneV2 &&
      c.data.source == DataSource::Synthetic && c.data.views > 7)
    add("data.views", std::to_string(c.data.views),
        "generated OpenLane-V2 frames have 7 views (subset A), 6 (subset B) or 1..5 (the first cameras of subset "
        "A): use one of those, or data.source \"openlanev2\" with data.root");
  if (ok({"train.eval_every", "data.source", "task"}) && c.train.eval_every > 0 &&
      (c.task != Task::OpenLaneV2 || c.data.source != DataSource::OpenLaneV2))
    add("train.eval_every", std::to_string(c.train.eval_every),
        "evaluation scores OpenLane-V2 predictions against labelled frames on disk: use task \"openlanev2\" with "
        "data.source \"openlanev2\" and data.root, or set train.eval_every to 0");
  const bool sharded = shards(c.parallel.strategy);  // tp, tp+checkpoint
  if (ok({"parallel.strategy", "parallel.sp"}) && sharded != (c.parallel.sp > 1))
    add("parallel.sp", std::to_string(c.parallel.sp),
        quote(name_of(c.parallel.strategy)) +
            (sharded ? " shards the width over sp ranks: set parallel.sp to 2 or more, or choose "
                       "strategy none or checkpoint"
                     : " does not shard: set parallel.sp to 1, or choose strategy tp or tp+checkpoint"));
  if (ok({"parallel.backend", "parallel.device"}) && c.parallel.backend == Backend::Nccl &&
      c.parallel.device == Device::Cpu)
    add("parallel.backend", quote(name_of(c.parallel.backend)),
        "NCCL needs CUDA tensors: use backend gloo or auto on device cpu, or set parallel.device to cuda");
  if (ok({"train.precision", "parallel.device"}) && c.train.precision == Precision::Fp16 &&
      c.parallel.device == Device::Cpu)
    add("train.precision", quote(name_of(c.train.precision)), "fp16 needs device cuda: use bf16 or fp32 on cpu");
  if (ok({"schedule.steps", "schedule.warmup_steps"}) && c.schedule.warmup_steps > c.schedule.steps)
    add("schedule.warmup_steps", std::to_string(c.schedule.warmup_steps),
        fmt::format("use at most schedule.steps ({})", c.schedule.steps));
}

void warn_unknown(const json& root, const Reader& r, ConfigResult& out) {
  std::vector<std::string>& warnings = out.warnings;
  auto warn = [&](const std::string& path) {
    out.unknown.push_back(path);
    std::string w = fmt::format("unknown key '{}' ignored", path.size() > 80 ? path.substr(0, 77) + "..." : path);
    if (r.known.count(path))  // a literal dotted key, e.g. {"optim.lr": 1}
      w += fmt::format("; nest it: \"{}\": {{\"{}\": ...}}", split_key(path).first, split_key(path).second);
    else if (auto s = closest_key(path, r.known))
      w += fmt::format("; did you mean '{}'?", *s);
    warnings.push_back(std::move(w));
  };
  for (const auto& [key, value] : root.items()) {
    if (key.find('.') != std::string::npos || !r.known.count(key))
      warn(key);
    else if (r.sections.count(key) && value.is_object())
      for (const auto& [sub, unused] : value.items())
        if (!r.known.count(key + "." + sub)) warn(key + "." + sub);
  }
}

}  // namespace

ConfigResult parse_experiment(const json& j) {
  ConfigResult r;
  if (!j.is_object()) {
    r.problems.push_back(
        {"", show(j), "the experiment must be a JSON object, e.g. {\"optim\": {\"lr\": 0.001}}, not " + type_of(j)});
    return r;
  }
  Reader reader(j, r);
  visit_fields(r.config, reader);
  check_combinations(r.config, reader, r.problems);
  warn_unknown(j, reader, r);
  return r;
}

void apply_override(json& j, const std::string& assignment) {
  auto malformed = [&](const std::string& why) {
    return util::Error(fmt::format("--set '{}': {}", assignment, why),
                       "write --set section.key=value, e.g. --set optim.lr=0.0005 or --set parallel.device=cuda");
  };
  const auto eq = assignment.find('=');
  if (eq == std::string::npos) throw malformed("no '=' between the key and the value");
  const auto parts = split(assignment.substr(0, eq), '.');
  if (std::any_of(parts.begin(), parts.end(), [](const auto& p) { return p.empty(); }))
    throw malformed(eq == 0 ? "the key before '=' is empty" : "the key has an empty part (check its dots)");
  if (!j.is_object()) throw malformed(fmt::format("the experiment is {}, not a JSON object", type_of(j)));
  json value = json::parse(assignment.substr(eq + 1), nullptr, false);
  if (value.is_discarded()) value = assignment.substr(eq + 1);
  json* node = &j;
  std::string walked;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    walked += (i ? "." : "") + parts[i];
    json& next = (*node)[parts[i]];  // inserts null when missing
    if (next.is_null()) next = json::object();
    if (!next.is_object()) throw malformed(fmt::format("'{}' is {}, not a section of settings", walked, type_of(next)));
    node = &next;
  }
  (*node)[parts.back()] = std::move(value);
}

namespace {

// The file's text, refusing anything longer than kMaxExperimentBytes (reading stops there).
std::string read_capped(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw util::Error(fmt::format("experiment file '{}' does not exist", path),
                      "check the path; ready files are in experiments/, e.g. experiments/quickstart.json");
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open() || std::filesystem::is_directory(path, ec))
    throw util::Error(fmt::format("cannot read experiment file '{}': {}", path,
                                  in.is_open() ? "it is a directory" : std::strerror(errno)),
                      "give the path of a readable .json file");
  std::string text(kMaxExperimentBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxExperimentBytes)
    throw util::Error(fmt::format("experiment file '{}' is longer than {} KiB; refusing to read further", path,
                                  kMaxExperimentBytes >> 10),
                      "an experiment is a small JSON object (see experiments/); check the path");
  return text;
}

// An override that names no known key is an error, not a warning: it was typed for this run.
void check_override_keys(const std::vector<std::string>& overrides, const ConfigResult& r) {
  for (const auto& o : overrides) {
    const std::string path = o.substr(0, o.find('='));
    for (size_t i = 0; i < r.unknown.size(); ++i)
      if (r.unknown[i] == path || r.unknown[i].starts_with(path + "."))
        throw util::Error(fmt::format("--set '{}': {}", o, r.warnings[i]),
                          "--set takes the dotted key of a setting, e.g. --set optim.lr=0.0005 (see "
                          "docs/guide/training.md for every key)");
  }
}

}  // namespace

ExperimentConfig load_experiment(const std::string& path, const std::vector<std::string>& overrides,
                                 std::vector<std::string>* warnings) {
  json j = parse_json_strict(read_capped(path), fmt::format("experiment file '{}'", path));
  for (const auto& o : overrides) apply_override(j, o);
  ConfigResult r = parse_experiment(j);
  check_override_keys(overrides, r);
  if (warnings) warnings->insert(warnings->end(), r.warnings.begin(), r.warnings.end());
  if (const size_t n = r.problems.size())
    throw util::Error(
        fmt::format("experiment '{}' has {} problem{}:\n{}", path, n, n == 1 ? "" : "s", describe_problems(r.problems)),
        "fix them in the file, or override with --set section.key=value");
  return r.config;
}

json to_json(const ExperimentConfig& c) {
  Writer w;
  visit_fields(c, w);
  return std::move(w.out);
}

std::vector<FieldInfo> field_list() {
  const ExperimentConfig defaults;
  Describer d;
  visit_fields(defaults, d);
  return std::move(d.out);
}

std::string FieldInfo::section() const {
  const auto dot = path.find('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

std::string FieldInfo::key() const { return path.substr(path.find('.') + 1); }

std::string describe_problems(const std::vector<ConfigProblem>& p) {
  std::string out;
  for (const auto& x : p)
    out += fmt::format("{}  - {}: {}: {}", out.empty() ? "" : "\n", x.field.empty() ? "(top level)" : x.field, x.value,
                       x.fix);
  return out;
}

}  // namespace halo::config
