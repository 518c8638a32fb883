// Integers accept whole-valued floats (1000.0); numbers accept null as NaN, since nlohmann
// writes NaN and infinities as null. Everything else of the wrong type is refused.
#include "protocol/FieldReader.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "protocol/EventNames.h"
#include "util/Error.h"

namespace halo::protocol {

namespace {
const nlohmann::json& empty_object() {
  static const nlohmann::json e = nlohmann::json::object();
  return e;
}

bool whole(const nlohmann::json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9.0e18;
}
}  // namespace

FieldReader::FieldReader(const nlohmann::json& j, std::string what, std::string path)
    : j_(&j), what_(std::move(what)), path_(std::move(path)) {
  if (!j.is_object())
    throw util::Error(
        fmt::format("{}: {} is {}, expected an object", what_, path_.empty() ? "the line" : path_, j.type_name()),
        "worker events are JSON objects (docs/protocol.md)");
}

FieldReader FieldReader::event(const nlohmann::json& j, const char* name) {
  FieldReader r(j, fmt::format("{} event", name));
  if (const std::string got = r.text(keys::event, name); got != name)
    throw util::Error(fmt::format("a '{}' event where a '{}' event was expected", got, name));
  return r;
}

const nlohmann::json* FieldReader::field(const char* key) const {
  const auto it = j_->find(key);
  return it == j_->end() ? nullptr : &*it;
}

bool FieldReader::has(const char* key) const { return field(key) != nullptr; }

std::string FieldReader::where(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

void FieldReader::wrong(const char* key, const nlohmann::json& v, const char* expected) const {
  throw util::Error(fmt::format("{}: field '{}' is {} ({}), expected {}", what_, where(key), v.type_name(),
                                v.dump().substr(0, 60), expected),
                    "the launcher and its workers must be the same halo build (docs/protocol.md lists the fields)");
}

void FieldReader::require(const char* key) const {
  const nlohmann::json* v = field(key);
  if (v == nullptr || v->is_null())
    throw util::Error(fmt::format("{}: required field '{}' is missing", what_, where(key)),
                      "docs/protocol.md lists each event's fields");
}

int64_t FieldReader::integer(const char* key, int64_t fallback) const {
  const nlohmann::json* v = field(key);
  if (v == nullptr) return fallback;
  if (!whole(*v)) wrong(key, *v, "an integer");
  return v->is_number_float() ? static_cast<int64_t>(v->get<double>()) : v->get<int64_t>();
}

double FieldReader::number(const char* key, double fallback) const {
  const nlohmann::json* v = field(key);
  if (v == nullptr) return fallback;
  if (v->is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v->is_number()) wrong(key, *v, "a number");
  return v->get<double>();
}

bool FieldReader::boolean(const char* key, bool fallback) const {
  const nlohmann::json* v = field(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) wrong(key, *v, "true or false");
  return v->get<bool>();
}

std::string FieldReader::text(const char* key, const std::string& fallback) const {
  const nlohmann::json* v = field(key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) wrong(key, *v, "a string");
  return v->get<std::string>();
}

std::map<std::string, double> FieldReader::numbers(const char* key) const {
  std::map<std::string, double> out;
  const FieldReader o = object(key);
  for (const auto& [k, v] : o.j_->items()) out[k] = o.number(k.c_str());
  return out;
}

template <size_t N>
std::array<int64_t, N> FieldReader::integers(const char* key) const {
  std::array<int64_t, N> out{};
  const nlohmann::json* v = field(key);
  if (v == nullptr) return out;
  if (!v->is_array() || v->size() != N) wrong(key, *v, fmt::format("an array of {} integers", N).c_str());
  for (size_t i = 0; i < N; ++i) {
    if (!whole((*v)[i])) wrong(key, *v, fmt::format("an array of {} integers", N).c_str());
    out[i] = (*v)[i].is_number_float() ? static_cast<int64_t>((*v)[i].get<double>()) : (*v)[i].get<int64_t>();
  }
  return out;
}

std::array<int64_t, 2> FieldReader::integer_pair(const char* key) const { return integers<2>(key); }
std::array<int64_t, 4> FieldReader::integer_quad(const char* key) const { return integers<4>(key); }

FieldReader FieldReader::object(const char* key) const {
  const nlohmann::json* v = field(key);
  if (v == nullptr) return FieldReader(empty_object(), what_, where(key));
  if (!v->is_object()) wrong(key, *v, "an object");
  return FieldReader(*v, what_, where(key));
}

std::vector<FieldReader> FieldReader::objects(const char* key) const {
  std::vector<FieldReader> out;
  const nlohmann::json* v = field(key);
  if (v == nullptr) return out;
  if (!v->is_array()) wrong(key, *v, "an array of objects");
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where(key), i);
    if (!(*v)[i].is_object()) wrong(key, (*v)[i], "an array of objects");
    out.emplace_back((*v)[i], what_, at);
  }
  return out;
}

}  // namespace halo::protocol
