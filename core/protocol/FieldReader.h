// Reads the fields of one event's JSON object: a missing field takes its default, a field of
// the wrong type is a util::Error naming the event and the field's path ("memory.peak").
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace halo::protocol {

class FieldReader {
 public:
  // j: the event's object, or one nested in it at `path`; what: "step event" (for errors).
  FieldReader(const nlohmann::json& j, std::string what, std::string path = {});
  // The top of event `name`'s object ("<name> event" in errors); refuses another event's line.
  static FieldReader event(const nlohmann::json& j, const char* name);

  bool has(const char* key) const;
  void require(const char* key) const;  // throws when the field is missing (or null)
  int64_t integer(const char* key, int64_t fallback = 0) const;
  double number(const char* key, double fallback = 0) const;  // null: NaN (how a non-finite value is written)
  bool boolean(const char* key, bool fallback = false) const;
  std::string text(const char* key, const std::string& fallback = {}) const;
  std::map<std::string, double> numbers(const char* key) const;  // an object of numbers; null entries: NaN
  std::array<int64_t, 2> integer_pair(const char* key) const;    // [a, b]; missing: zeros
  std::array<int64_t, 4> integer_quad(const char* key) const;    // [a, b, c, d]; missing: zeros
  FieldReader object(const char* key) const;                     // missing: an empty object
  std::vector<FieldReader> objects(const char* key) const;       // an array of objects; missing: none

 private:
  const nlohmann::json* field(const char* key) const;  // null when missing
  std::string where(const char* key) const;
  [[noreturn]] void wrong(const char* key, const nlohmann::json& v, const char* expected) const;
  template <size_t N>
  std::array<int64_t, N> integers(const char* key) const;

  const nlohmann::json* j_;
  std::string what_, path_;
};

}  // namespace halo::protocol
