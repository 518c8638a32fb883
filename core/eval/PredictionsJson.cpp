// Reading and writing the prediction JSON, with errors naming the key path and field.
#include "eval/PredictionsJson.h"

#include <algorithm>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "util/Error.h"

namespace halo::eval {
namespace {

using nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& problem) const {
    throw util::Error(fmt::format("{}: {} {}", source_, path, problem),
                      "see `halo eval --help` for the prediction file format");
  }
  const json& member(const json& obj, const std::string& path, const std::string& key) const {
    if (!obj.is_object()) fail(path, fmt::format("is {}, expected an object", obj.type_name()));
    auto it = obj.find(key);
    if (it == obj.end()) fail(path + "/" + key, "is missing");
    return *it;
  }
  const json& array(const json& v, const std::string& path, std::optional<size_t> size = {}) const {
    if (!v.is_array()) fail(path, fmt::format("is {}, expected a list", v.type_name()));
    if (size && v.size() != *size) fail(path, fmt::format("has {} entries, expected {}", v.size(), *size));
    return v;
  }
  double number(const json& v, const std::string& path) const {
    if (!v.is_number()) fail(path, fmt::format("is {}, expected a number", v.type_name()));
    return v.get<double>();
  }
  int64_t integer(const json& v, const std::string& path) const {
    if (!v.is_number_integer()) fail(path, fmt::format("is {}, expected an integer", v.dump()));
    return v.get<int64_t>();
  }
  std::vector<std::vector<double>> matrix(const json& v, const std::string& path) const {
    std::vector<std::vector<double>> m;
    for (size_t r = 0; r < array(v, path).size(); ++r) {
      const std::string row_path = fmt::format("{}[{}]", path, r);
      auto& row = m.emplace_back();
      for (size_t c = 0; c < array(v[r], row_path).size(); ++c)
        row.push_back(number(v[r][c], fmt::format("{}[{}]", row_path, c)));
    }
    return m;
  }

  double number_at(const json& obj, const std::string& path, const std::string& key) const {
    return number(member(obj, path, key), path + "/" + key);
  }
  int64_t integer_at(const json& obj, const std::string& path, const std::string& key) const {
    return integer(member(obj, path, key), path + "/" + key);
  }
  // obj[key] as a list of points of `dims` coordinates (exactly `count` of them when given).
  std::vector<std::vector<double>> points_at(const json& obj, const std::string& path, size_t dims,
                                             std::optional<size_t> count = {}) const {
    const json& pts = array(member(obj, path, "points"), path + "/points", count);
    std::vector<std::vector<double>> out;
    for (size_t k = 0; k < pts.size(); ++k) {
      const std::string pp = fmt::format("{}/points[{}]", path, k);
      auto& q = out.emplace_back();
      for (const json& x : array(pts[k], pp, dims)) q.push_back(number(x, pp));
    }
    return out;
  }

  // fn(item, path) for each entry of the list obj[key].
  template <class Fn>
  void for_each_item(const json& obj, const std::string& at, const char* key, Fn fn) const {
    const json& items = array(member(obj, at, key), at + "/" + key);
    for (size_t i = 0; i < items.size(); ++i) fn(items[i], fmt::format("{}/{}[{}]", at, key, i));
  }

  FramePrediction frame(const json& v, const std::string& at) const {
    FramePrediction f;
    for_each_item(v, at, "lane_centerline", [&](const json& item, const std::string& p) {
      LanePrediction& l = f.lanes.emplace_back();
      l.id = integer_at(item, p, "id");
      l.confidence = number_at(item, p, "confidence");
      for (const auto& q : points_at(item, p, 3)) l.points.push_back({q[0], q[1], q[2]});
    });
    for_each_item(v, at, "traffic_element", [&](const json& item, const std::string& p) {
      ElementPrediction& e = f.elements.emplace_back();
      e.id = integer_at(item, p, "id");
      e.attribute = integer_at(item, p, "attribute");
      e.confidence = number_at(item, p, "confidence");
      const auto corners = points_at(item, p, 2, 2);
      e.box = {corners[0][0], corners[0][1], corners[1][0], corners[1][1]};
    });
    f.topology_lclc = matrix(member(v, at, "topology_lclc"), at + "/topology_lclc");
    f.topology_lcte = matrix(member(v, at, "topology_lcte"), at + "/topology_lcte");
    return f;
  }

 private:
  std::string source_;
};

json matrix_json(const std::vector<std::vector<double>>& m) {
  json out = json::array();
  for (const auto& row : m) out.push_back(row);
  return out;
}

}  // namespace

Predictions parse_predictions(const json& doc, const std::string& source) {
  Reader r(source);
  const json& results = r.member(doc, "<document>", "results");
  if (!results.is_object())
    r.fail("results",
           fmt::format("is {}, expected an object keyed by \"split/segment_id/timestamp\"", results.type_name()));
  Predictions out;
  for (const auto& [key, value] : results.items()) {
    const std::string at = "results/" + key;
    if (std::count(key.begin(), key.end(), '/') != 2) r.fail(at, "is not a \"split/segment_id/timestamp\" key");
    out[key] = r.frame(r.member(value, at, "predictions"), at + "/predictions");
  }
  return out;
}

Predictions read_predictions(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw util::Error(fmt::format("cannot open prediction file {}", path.string()), "check the --pred path");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw util::Error(fmt::format("{}: is not valid JSON ({})", path.string(), e.what()),
                      "write the predictions with a JSON writer; NaN and Infinity are not JSON");
  }
  return parse_predictions(doc, path.string());
}

json predictions_to_json(const Predictions& pred, const std::string& method) {
  json results = json::object();
  for (const auto& [key, f] : pred) {
    json lanes = json::array(), elements = json::array();
    for (const auto& l : f.lanes) lanes.push_back({{"id", l.id}, {"points", l.points}, {"confidence", l.confidence}});
    for (const auto& e : f.elements)
      elements.push_back({{"id", e.id},
                          {"attribute", e.attribute},
                          {"confidence", e.confidence},
                          {"points", {{e.box[0], e.box[1]}, {e.box[2], e.box[3]}}}});
    results[key] = {{"predictions",
                     {{"lane_centerline", lanes},
                      {"traffic_element", elements},
                      {"topology_lclc", matrix_json(f.topology_lclc)},
                      {"topology_lcte", matrix_json(f.topology_lcte)}}}};
  }
  return {{"method", method}, {"results", results}};
}

}  // namespace halo::eval
